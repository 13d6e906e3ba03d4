# Helpers for the two-guest test (sourced by pair/pair-a.sh and
# pair/pair-b.sh after lib.sh). The guests talk through the mailbox
# (mbox): A writes channel 0 and reads channel 1, B the other way round.
# Every message starts with a tag that says which step it ends; a guest
# that hears the wrong tag, or nothing, stops listening (each later hear
# fails at once) so a broken peer costs one timeout, not one per step.

M=/mnt/famfs
S=$M/.meta/.status
export FAMFS_FUSED=/usr/bin/famfs-fused

# pair_init a|b: who this guest is.
pair_init() {
	if [ "$1" = a ]; then
		MB_OUT=0 MB_IN=1 PEER=B
	else
		MB_OUT=1 MB_IN=0 PEER=A
	fi
	MB_GOT=0 MB_DEAD=
	mkdir -p $M
}

# say TAG [TEXT...]: the next message to the peer.
say() { mbox send $MB_OUT "$*"; }

# hear TAG [SECONDS]: wait (default 120 s) for the peer's next message,
# which must carry TAG; the text after the tag is left in $HEARD.
hear() {
	local m
	HEARD=
	if [ -n "$MB_DEAD" ]; then
		note "not waiting for $PEER's '$1': the mailbox is out of step"
		return 1
	fi
	MB_GOT=$((MB_GOT + 1))
	if ! m=$(mbox recv $MB_IN $MB_GOT $((${2:-120} * SLOW))); then
		MB_DEAD=1
		note "$PEER sent no '$1' (message $MB_GOT)"
		return 1
	fi
	case "$m" in
	"$1") return 0 ;;
	"$1 "*) HEARD=${m#"$1 "}; return 0 ;;
	esac
	MB_DEAD=1
	note "wanted $PEER's '$1' as message $MB_GOT, got: $m"
	return 1
}

# measure NAME VALUE UNIT: a measured figure for the host's log
measure() { report "# measure: $*"; }

# set_uuid UUID: this guest's famfs identity (/opt/famfs/system_uuid)
set_uuid() {
	mkdir -p /opt/famfs && echo "$1" >/opt/famfs/system_uuid
}

# seconds_since T0: seconds from "fvt now" T0 until now, 3 decimals
seconds_since() {
	awk -v a="$1" -v b="$(fvt now)" 'BEGIN { printf "%.3f", b - a }'
}

# same FILE TEXT: FILE holds TEXT (what the peer computed; not empty);
# a diff if not
same() {
	[ -n "$2" ] || { echo "nothing to compare $1 with"; return 1; }
	printf '%s\n' "$2" >/tmp/peer.txt
	diff /tmp/peer.txt "$1"
}

# devcmp_all FILE...: for each FILE (at least one), read(2) == mmap ==
# the device bytes at the extents "famfs getmap" gives. On 7.3 no one
# reads a device a mount holds (fsdev_dax hides its node): read(2) ==
# mmap there, the file standing in for the device.
devcmp_all() {
	local f
	[ $# -gt 0 ] || { echo "no files"; return 1; }
	for f in "$@"; do
		case $(uname -r) in
		6.12.*) fvt devcmp "$f" /dev/dax0.0 "$(fmap_spec "$f")" ;;
		*) fvt devcmp "$f" "$f" "s:0:$(stat -c %s "$f")" ;;
		esac || return 1
	done
}
