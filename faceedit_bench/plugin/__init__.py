"""Plugin loading: hook specifications, the plugin manager, the registry, component protocols."""
