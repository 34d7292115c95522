"""Config entry of the judge (conf/judge/qwen_vl.yaml), found through the Hydra search path."""
