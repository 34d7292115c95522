"""The judge: its service, prompt templates, judged metrics, anchors, human agreement."""
