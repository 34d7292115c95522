"""Config entries: editor/nano_banana.yaml and judge/gemini.yaml (Hydra searches this package)."""
