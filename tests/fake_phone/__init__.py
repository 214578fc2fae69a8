"""A fake Android phone for tests: it speaks the adb *device* protocol over TCP.

A real adb server (the one bundled with adbutils, on an isolated port) attaches to it
with ``adb connect 127.0.0.1:PORT``, exactly as it would to a phone with wireless
debugging, so everything above the wire (the adb server, adbutils, the ``adb`` command
line) is real. The phone's storage is a sandbox folder: device path ``/a/b`` is
``root/a/b``.

Protocol (system/core/adb/protocol.txt): 24-byte little-endian headers
(command, arg0, arg1, length, checksum, magic); CNXN without AUTH (or, when not
authorized, AUTH tokens that are never accepted, so the server shows "unauthorized");
streams with OPEN/OKAY/WRTE/CLSE and one write in flight per direction (flow control).
Services: ``shell:`` (v1), ``shell,v2,...:`` (packets with exit codes) and ``sync:``
(STAT, LIST, SEND, RECV, QUIT). A mini shell understands ``getprop``, ``df -k``,
``ls [-l] [-a] [-d]``, ``mkdir -p``, ``mv``, ``rm [-rf]``, ``sha256sum``, ``cat`` and
``echo``, joined by ``;`` or ``&&``, with ``> FILE`` and ``>> FILE``. A v2 shell's
stdin comes in stdin packets until a close-stdin packet (as adbd's ``shell,v2,raw:``
passes them on); ``cat`` without files copies it block by block as it arrives, so a
cut leaves what came, as toybox's cat under mksh does. A write beyond ``free_bytes``
fails with toybox's ``xwrite: No space left on device``.

Switches (plain attributes, may change while it runs): ``free_bytes`` (what ``df``
reports and what writes may use), ``cut_after_bytes`` (drop the connection once that
many bytes of data arrived), ``unplugged`` (refuse connections),
``throttle_bytes_per_s`` (a slower cable), ``missing_commands`` (an older toybox),
``command_delay`` (seconds a command takes, by name), ``corrupt_files`` (a received
file whose path contains one of these strings gets one byte flipped, as a bad cable
would; each entry is used once), ``case_insensitive_storage`` (on by default: under
``/sdcard`` names match whatever their case, as on a phone). ``ls -la`` lists ``.``,
``..`` and symlink targets as toybox does. ``shell_v2=False`` makes an
Android 6 phone, whose v1 shell mixes stderr into stdout and reports no exit status.
Counter:
``bytes_received``. ``settle()`` waits until every service has ended (a phone's end on
their own once a client stopped or the cable is gone).

The package: ``wire.py`` (the adb protocol and streams), ``sync.py`` (the sync service),
``shell.py`` (the shell services and the mini shell), ``phone.py`` (``FakePhone``).
"""

from tests.fake_phone.phone import FakePhone

__all__ = ["FakePhone"]
