"""The judge: its service, prompt templates, judged metrics, anchors, judge-human agreement."""
