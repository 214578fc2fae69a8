"""Getting packs from the Hugging Face Hub: plans, transfers, installs, the catalog."""
