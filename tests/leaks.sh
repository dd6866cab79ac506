# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Leak checks of the test runner (tools/run-tests.sh): nothing a test made
# may outlive it.  Sourced, not run.
#
#   leak_snapshot DIR        before the suites: what exists already
#   leak_check DIR RUN_ID    after them: one PASS or FAIL line per kind
#
# The runner gives every suite BW_RUN_ID=RUN_ID in its environment, and
# tests/lib.sh names its temporary files, loop images and mount points
# blkwise-test-RUN_ID.  A leak is something of this run:
#   processes      any process whose environment holds BW_RUN_ID=RUN_ID
#                  (blkwise, fakedisk, fio, a shell: whatever a test started)
#   bpf-programs   a program named as one of blkwise's (the names come from
#   bpf-maps       the skeletons of bpf/, build/*.skel.h), loaded after the
#   bpf-links      snapshot, and held by no process outside this run (a
#                  link: one whose program is such a program)
#   loop-devices   a loop device whose backing file is named blkwise-test-RUN_ID
#   mounts         a mount whose source or mount point is named so
#   devices        a device-mapper or md device named bwtest*, a null_blk,
#                  scsi_debug or brd module, or a zram0 with a size, none of
#                  which was there at the snapshot
# Other users' objects on a shared machine are not this run's: another
# process's programs, maps and links, another run's files and devices.

# BPF object names are cut to 15 characters by the kernel.
leak_bpf_names() {
	sed -n "s/.*->$1\[[0-9]*\]\.name = \"\(.*\)\";/\1/p" build/*.skel.h 2>/dev/null | cut -c 1-15 | sort -u
}

# leak_bpf_lists DIR: progs (id name map_ids), maps (id name), links
# (id prog_id) as bpftool lists them now, tab-separated.
leak_bpf_lists() {
	local k
	for k in prog map link; do
		bpftool -j "$k" list >"$1/$k.json" 2>"$1/bpftool.err" ||
			{ echo "bpftool $k list failed: $(head -n 1 "$1/bpftool.err")"; return 1; }
	done
	jq -r '.[] | [.id, .name // "-", ((.map_ids // []) | map(tostring) | join(",") | if . == "" then "-" else . end)]
		| @tsv' "$1/prog.json" >"$1/progs"
	jq -r '.[] | [.id, .name // "-"] | @tsv' "$1/map.json" >"$1/maps"
	jq -r '.[] | [.id, .prog_id // 0] | @tsv' "$1/link.json" >"$1/links"
}

# leak_ours RUN_ID: the PIDs of this run's processes.
leak_ours() {
	grep -lzx "BW_RUN_ID=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
}

# leak_holders DIR RUN_ID: "ours|foreign prog|map|link ID" for every BPF
# object a process holds a file descriptor of (a link's fdinfo names its
# program).
leak_holders() {
	leak_ours "$2" >"$1/ours"
	grep -rHE '^(prog|map|link)_id:' /proc/[0-9]*/fdinfo 2>/dev/null |
		awk -v ours="$1/ours" 'BEGIN { while ((getline p <ours) > 0) our[p] = 1 }
		{ split($0, f, "/"); split($0, k, ":"); sub(/_id$/, "", k[2])
		  print (our[f[3]] ? "ours" : "foreign"), k[2], $2 }' | sort -u
}

# leak_procs RUN_ID: "comm[pid]" of every process of this run.
leak_procs() {
	local p
	for p in $(leak_ours "$1"); do
		echo "$(cat "/proc/$p/comm" 2>/dev/null)[$p]"
	done
}

# leak_devices: the test devices present now, one a line.
leak_devices() {
	local d
	for d in /sys/block/dm-*/dm/name; do
		[ -f "$d" ] && grep -H '^bwtest' "$d" | sed 's,^/sys/block/\([^/]*\)/dm/name:,dm \1 ,'
	done
	for d in /dev/md/bwtest*; do [ -e "$d" ] || [ -L "$d" ] && echo "md $d"; done
	awk '$1 ~ /^(null_blk|scsi_debug|brd)$/ { print "module " $1 }' /proc/modules 2>/dev/null
	[ "$(cat /sys/block/zram0/disksize 2>/dev/null || echo 0)" = 0 ] || echo "zram zram0 configured"
	return 0
}

leak_snapshot() {
	local k
	leak_bpf_lists "$1" >/dev/null
	for k in progs maps links; do
		mv -f "$1/$k" "$1/before.$k" 2>/dev/null || : >"$1/before.$k"
	done
	leak_devices >"$1/devices"
}

# leak_bpf DIR RUN_ID: prints "progs|maps|links NAME#ID" for each BPF leak.
leak_bpf() {
	local why
	why=$(leak_bpf_lists "$1") || { echo "programs ($why)"; return; }
	leak_holders "$1" "$2" >"$1/holders"
	leak_bpf_names progs >"$1/prognames"
	leak_bpf_names maps >"$1/mapnames"
	(cd "$1" && awk -F'\t' '
	FILENAME == "holders" { split($0, w, " "); if (w[1] == "foreign") foreign[w[2] " " w[3]] = 1; next }
	FILENAME == "prognames" { pn[$1] = 1; next }
	FILENAME == "mapnames" { mn[$1] = 1; next }
	FILENAME ~ /^before\./ { k = substr(FILENAME, 8); old[substr(k, 1, length(k) - 1) " " $1] = 1; next }
	FILENAME == "progs" {
		id = "prog " $1
		name[id] = $2
		if (pn[$2] && !old[id] && !foreign[id]) { print "programs " $2 "#" $1; next }
		# A map that a program outside this run uses is not a leak of it.
		n = split($3, m, ",")
		for (i = 1; i <= n; i++) foreign["map " m[i]] = 1
		next
	}
	FILENAME == "maps" {
		id = "map " $1
		if (mn[$2] && !old[id] && !foreign[id]) print "maps " $2 "#" $1
		next
	}
	FILENAME == "links" {
		id = "link " $1
		if (pn[name["prog " $2]] && !old[id] && !foreign[id]) print "links " name["prog " $2] "#" $1
	}' holders prognames mapnames before.progs before.maps before.links progs maps links)
}

# leak_line NAME WHAT LIST: PASS when LIST is empty, else FAIL naming it.
leak_line() {
	local n
	if [ -z "$3" ]; then
		echo "PASS leaks:$1"
		return
	fi
	n=$(echo "$3" | wc -l)
	echo "FAIL leaks:$1 ($n $2 left: $(echo "$3" | head -n 8 | paste -sd' ')$([ "$n" -le 8 ] || echo ' ...'))"
}

leak_check() {
	local dir=$1 id=$2 tag=blkwise-test-$2 bpf procs loops mounts devs
	# A leak is what stays for two seconds: programs are freed from a kernel
	# work item after their last holder goes, a killed process takes a
	# moment to go, and on a shared machine another user's programs linger
	# so after that user's process exits.
	bpf=$(leak_bpf "$dir" "$id" | sort)
	procs=$(leak_procs "$id" | sort)
	for _ in $(seq 20); do
		[ -z "$bpf$procs" ] && break
		sleep 0.1
		bpf=$(comm -12 <(echo "$bpf") <(leak_bpf "$dir" "$id" | sort))
		procs=$(comm -12 <(echo "$procs") <(leak_procs "$id" | sort))
	done
	ls build/*.skel.h >/dev/null 2>&1 ||
		bpf="programs (no build/*.skel.h: blkwise's program names unknown)"
	leak_line processes processes "$procs"
	leak_line bpf-programs "blkwise programs" "$(echo "$bpf" | sed -n 's/^programs //p')"
	leak_line bpf-maps "blkwise maps" "$(echo "$bpf" | sed -n 's/^maps //p')"
	leak_line bpf-links "links of blkwise programs" "$(echo "$bpf" | sed -n 's/^links //p')"
	loops=$(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | grep -F "$tag" | awk '{ print $1 }')
	leak_line loop-devices "loop devices" "$loops"
	mounts=$(awk -v t="$tag" 'index($1, t) || index($2, t) { print $2 }' /proc/mounts)
	leak_line mounts mounts "$mounts"
	devs=$(leak_devices | grep -vxF -f "$dir/devices" | tr ' ' ':')
	leak_line devices "test devices" "$devs"
}
