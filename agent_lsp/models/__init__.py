"""Model providers, one file each; `registry.build_model` picks one from the settings."""
