"""The window's pack-making dialogs: File → Make Pack… and File → Publish to Hugging Face…"""
