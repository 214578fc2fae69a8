"""Qt widgets and models. Imports core and the engine client, never MNN."""
