#!/bin/sh
# Put this DraftDeck folder in the user's menu (no root needed):
#   ./install.sh            copy to ~/.local/opt/DraftDeck, add a menu entry and icon
#   ./install.sh --remove   take them away again (your settings and packs stay)
set -eu

HERE=$(cd "$(dirname "$0")" && pwd -P)
OPT="${HOME}/.local/opt/DraftDeck"
DATA="${XDG_DATA_HOME:-${HOME}/.local/share}"
APPS="${DATA}/applications"
ICONS="${DATA}/icons/hicolor/256x256/apps"

if [ "${1:-}" = "--remove" ]; then
    rm -rf "${OPT}"
    rm -f "${APPS}/draftdeck.desktop" "${ICONS}/draftdeck.png"
    echo "DraftDeck removed from the menu (settings and packs are kept)."
    exit 0
fi

if [ ! -x "${HERE}/draftdeck" ]; then
    echo "install.sh: run it from the unpacked DraftDeck folder (draftdeck not found in ${HERE})" >&2
    exit 1
fi

mkdir -p "${OPT}" "${APPS}" "${ICONS}"
# Compare real paths: run through a symlink to ${OPT}, this must not delete itself.
if [ "${HERE}" != "$(cd "${OPT}" && pwd -P)" ]; then
    rm -rf "${OPT}"
    cp -R "${HERE}" "${OPT}"
fi
cp "${HERE}/draftdeck.png" "${ICONS}/draftdeck.png"
# The Exec value quoted as the desktop-entry spec asks: \ " ` $ escaped inside the
# quotes, % doubled. Written line by line: the path may hold & | or \ (no sed on it).
exec_path=$(printf '%s' "${OPT}/draftdeck" | sed -e 's/[\\"`$]/\\&/g' -e 's/%/%%/g')
while IFS= read -r line; do
    case "${line}" in
        Exec=@EXEC@) printf 'Exec="%s"\n' "${exec_path}" ;;
        *) printf '%s\n' "${line}" ;;
    esac
done < "${HERE}/draftdeck.desktop" > "${APPS}/draftdeck.desktop"
chmod 644 "${APPS}/draftdeck.desktop"
if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database "${APPS}" >/dev/null 2>&1 || true
fi
echo "DraftDeck installed in ${OPT}; find it in your applications menu."
