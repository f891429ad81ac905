# Sourced first by every script under tools/, with the script's arguments: `-h` or `--help` as the
# first one prints the script's header comment (what it does, its usage) and exits 0, before the
# script does anything.
case "${1:-}" in
  -h | --help)
    awk 'NR == 1 && /^#!/ { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
    exit 0
    ;;
esac
