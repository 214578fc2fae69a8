"""Making a pack: its measured runtime_config.json, its model card, what is published."""
