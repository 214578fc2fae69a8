"""Android phones over adb: devices, what is on them, and pushing packs."""
