"""Recipes: the typed schema of config_cpu.json, reading and writing it, presets."""
