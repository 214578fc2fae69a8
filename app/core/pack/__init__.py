"""Packs: reading MNN bundles and their tokenizers, sizing them, pairing them."""
