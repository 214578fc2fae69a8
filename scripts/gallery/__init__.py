"""The screenshot gallery behind `make screenshots`: every page of the main window at
several window sizes, in an empty state and in busy ones, plus the README shots.

`camera` grabs and checks the PNGs, `stage` builds the DraftDeck homes and the local
stand-ins (Hub, adb server, phones), `empty` and `busy` drive the window through the
states, and `index` writes the HTML page that lists them.
"""
