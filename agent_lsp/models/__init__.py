"""Model providers, one file each; `resolver.resolve` decides which one the settings choose."""
