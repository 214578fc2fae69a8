"""DraftDeck: a desktop workbench for speculative decoding with MNN draft packs."""

__version__ = "0.1.0"
