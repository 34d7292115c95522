"""Config entries of the editors (conf/editor/<name>.yaml), found through the Hydra search path."""
