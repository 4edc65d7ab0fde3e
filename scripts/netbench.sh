#!/usr/bin/env bash
# A network of P hosts on this machine, and an MPI program launched into it:
#
#   scripts/netbench.sh [-p P] [-r RATE] [options] -- [mpirun options] PROGRAM [ARGS]
#
#   -p P              hosts (default 2): namespaces h0 .. h(P-1), one MPI
#                     rank each, 10.77.0.(i+1)/24 on their eth0
#   -r RATE           every link's rate, each direction, as tc spells it
#                     (1gbit, 10gbit; default 1gbit); 0: not shaped
#   --burst BYTES     tbf bucket (default max(128 KiB, 400 us at RATE))
#   --limit BYTES     tbf queue (default max(4 x burst, 20 ms at RATE))
#   --offload on|off  TSO/GSO/GRO on the veths (default on, the kernel's)
#   --bind core|none|openmpi  host i's rank on core i mod NCORES (default),
#                     left to the scheduler, or Open MPI's own binding (which
#                     puts every rank on core 0: see "binding" below)
#   --yield 0|1       mpi_yield_when_idle (default 1: see "binding" below)
#   --nap US          a yielding rank sleeps US microseconds instead (default
#                     50 when there are more hosts than cores, else 0: yield)
#   --timeout S       kill mpirun after S seconds (default 600)
#   --stats           print each link's tc counters (sent, dropped) after
#   --check           only tell whether namespaces can be made here
#   -v                print the mpirun command
# Exit status: the program's; 77 (CTest's SKIP_RETURN_CODE) with the reason
# on stderr where the network cannot be made (not root, no iproute2, no
# namespaces, no Open MPI).
#
# The network: a bridge in a namespace of its own (the switch; mpirun runs
# there as the head node, 10.77.0.254), one veth pair per host from its eth0
# to a bridge port. Each link is shaped at both ends with a token bucket
# (tc tbf): egress of eth0 is the host's uplink, egress of the bridge port
# its downlink, so every host sends and receives at RATE, full duplex, as on
# a switch. Latency is not modelled (this kernel has no netem): a packet
# waits for its tokens and for the kernel's path through veth and bridge,
# which net_probe's 8-byte one-way time measures (about 10 us).
# The bucket lets `burst` bytes through at memory speed after an idle
# spell, so a message well under the bucket arrives faster than at RATE;
# one of a few buckets travels at RATE. A bucket under two TSO packets
# (2 x 64 KiB) throttles TCP below RATE (tbf waits for a whole packet's
# tokens): 1 MiB at 1 Gbit/s takes 1.4x its line-rate time with 64 KiB.
# Each host is also a UTS namespace (hostname h<i>): Open MPI tells nodes
# apart by hostname. Nothing outside the namespaces is touched but
# /etc/netns/<ns>/hosts (read by `ip netns exec`) and a temporary directory
# (which also holds Open MPI's run-time directories);
# all of it is deleted on exit, failure or signal, and what a run killed
# outright (SIGKILL, a CTest timeout) left is deleted by the next run.
#
# Binding: each orted sees the whole machine and one rank on its "node", so
# Open MPI's default (bind to the first free core) pins every host's rank to
# core 0. Two ranks busy-polling one core take turns per scheduler tick
# (CONFIG_HZ=250, no preemption: 4 ms): every message waited 4 ms and
# MPI_Barrier took 8 ms. --bind core pins host i to core i mod
# NCORES instead. Idle ranks yield (mpi_yield_when_idle): at P = 2 it costs
# about 1 us of latency, and on a loaded machine (others' builds) it lets the
# kernel's network work run: 1 MiB at 1 Gbit/s took 1.85x its line-rate time
# with spinning ranks, 1.17x with yielding ones, at load 9. With more hosts
# than cores the ranks share cores whatever the binding, and the figures
# measure the scheduler as much as the network; there a yielding rank sleeps
# instead (--nap: sched_yield replaced by a 50 us nanosleep through a
# preloaded library the script compiles), which at P = 8 on 2 cores took the
# barrier from 12 ms to 0.9 ms.
#
# Open MPI (Debian's 4.1) runs on TCP only: pml ob1, btl tcp,self, the BTL
# and the runtime's out-of-band channel on 10.77.0.0/24, launched by an
# agent (plm_rsh_agent) that runs `ip netns exec` for the hostfile's names.
set -euo pipefail

skip=77
hosts=2 rate=1gbit burst='' limit='' offload=on bind=core yield=1 nap=auto timeout_s=600
check_only=0 verbose=0 stats=0
usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while (($#)); do
    case $1 in
    -p) hosts=$2; shift 2 ;;
    -r) rate=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --offload) offload=$2; shift 2 ;;
    --bind) bind=$2; shift 2 ;;
    --yield) yield=$2; shift 2 ;;
    --nap) nap=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --stats) stats=1; shift ;;
    --check) check_only=1; shift ;;
    -v) verbose=1; shift ;;
    -h|--help) usage 0 ;;
    --) shift; break ;;
    *) echo "netbench: unknown option $1" >&2; usage ;;
    esac
done
[[ $hosts =~ ^[0-9]+$ ]] && ((hosts >= 1 && hosts <= 250)) || { echo "netbench: -p wants 1..250" >&2; exit 2; }
[[ -z $burst || ($burst =~ ^[0-9]+$ && burst -ge 16384) ]] ||
    { echo "netbench: --burst wants bytes, at least 16384 (a bucket under one frame passes nothing)" >&2; exit 2; }
[[ -z $limit || ($limit =~ ^[0-9]+$ && limit -ge 16384) ]] || { echo "netbench: --limit wants bytes, at least 16384" >&2; exit 2; }
[[ $bind =~ ^(core|none|openmpi)$ && $yield =~ ^(0|1)$ && $offload =~ ^(on|off)$ && $nap =~ ^(auto|[0-9]{1,5})$ ]] ||
    { echo "netbench: --bind core|none|openmpi, --yield 0|1, --offload on|off, --nap US" >&2; exit 2; }
((check_only || $# > 0)) || { echo "netbench: no program after --" >&2; usage; }

# --- can the network be made here? -----------------------------------------
cannot() { echo "netbench: SKIP: $*" >&2; exit $skip; }
((EUID == 0)) || cannot "not root (network namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN)"
for tool in ip unshare hostname timeout; do
    command -v $tool >/dev/null || cannot "no '$tool' command (iproute2, util-linux, hostname, coreutils)"
done
[[ $rate == 0 ]] || command -v tc >/dev/null || cannot "no 'tc' command (iproute2) to shape links at $rate"
[[ $offload == on ]] || command -v ethtool >/dev/null || cannot "--offload off needs ethtool"
mpirun --version 2>&1 | grep -q "Open MPI" || cannot "mpirun is not Open MPI's (the launcher agent is Open MPI's plm_rsh_agent)"

prefix="srnb$$"
delete_ns() { # name: its processes, the namespace, its hosts file
    ip netns pids "$1" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$1" 2>/dev/null || true
    rm -rf "/etc/netns/$1"
}
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^srnb[0-9]+(br|h[0-9]+)$' || true); do
    pid=${ns#srnb}; pid=${pid%%[!0-9]*}
    kill -0 "$pid" 2>/dev/null || { delete_ns "$ns"; rm -rf "/tmp/netbench.srnb$pid".*; }
done
work=$(mktemp -d "/tmp/netbench.$prefix.XXXXXX")
mkdir "$work/ompi" # Open MPI's run-time directories, deleted with $work
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}(br|h[0-9]+)$" || true); do
        delete_ns "$ns"
    done
    rmdir /etc/netns 2>/dev/null || true # only when empty: other runs' files stay
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
ip netns add "${prefix}br" 2>"$work/err" || cannot "ip netns add failed: $(cat "$work/err")"
((check_only)) && { echo "netbench: network namespaces can be made here"; exit 0; }

# --- the network -------------------------------------------------------------
# A kernel without veth, bridge or tbf is a machine where the network cannot
# be made: every step that builds it skips on failure, with the reason.
net() { "$@" 2>"$work/err" || cannot "could not build the network: '$*' said: $(tr '\n' ' ' <"$work/err")"; }
in_br() { net ip netns exec "${prefix}br" "$@"; }
in_host() { local h=$1; shift; net ip netns exec "${prefix}h$h" "$@"; }
in_br ip link set lo up
in_br ip link add br0 type bridge
in_br ip addr add 10.77.0.254/24 dev br0
in_br ip link set br0 up

if [[ $rate != 0 ]]; then
    bits=$(awk -v r="${rate,,}" 'BEGIN {
        m = 1; if (r ~ /gbit$/) m = 1e9; else if (r ~ /mbit$/) m = 1e6; else if (r ~ /kbit$/) m = 1e3
        else if (r !~ /^[0-9.]+(bit)?$/) exit 1
        printf "%.0f", (r + 0) * m }') || { echo "netbench: rate $rate: use bit, kbit, mbit or gbit" >&2; exit 2; }
    bytes_in() { awk -v b="$bits" -v s="$1" -v lo="$2" 'BEGIN { x = b / 8 * s; printf "%.0f", x < lo ? lo : x }'; }
    [[ -n $burst ]] || burst=$(bytes_in 0.0004 131072)
    [[ -n $limit ]] || limit=$(bytes_in 0.02 $((4 * burst)))
fi
link_end() { # namespace device: shaped, offloads as asked
    [[ $rate == 0 ]] || net ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$rate" burst "$burst" limit "$limit"
    [[ $offload == on ]] || net ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null
}
for ((h = 0; h < hosts; ++h)); do
    net ip netns add "${prefix}h$h"
    in_br ip link add "p$h" type veth peer name eth0 netns "${prefix}h$h"
    in_br ip link set "p$h" master br0 up
    in_host "$h" ip link set lo up
    in_host "$h" ip addr add "10.77.0.$((h + 1))/24" dev eth0
    in_host "$h" ip link set eth0 up
    link_end "${prefix}h$h" eth0
    link_end "${prefix}br" "p$h"
done
{
    echo "127.0.0.1 localhost"
    echo "10.77.0.254 head"
    for ((h = 0; h < hosts; ++h)); do echo "10.77.0.$((h + 1)) h$h"; done
} >"$work/hosts"
for ns in "${prefix}br" $(seq -f "${prefix}h%g" 0 $((hosts - 1))); do
    mkdir -p "/etc/netns/$ns" && cp "$work/hosts" "/etc/netns/$ns/hosts"
done

# --- the launcher agent, hostfile, binding -------------------------------------
cat >"$work/agent" <<EOF
#!/bin/sh
# Open MPI's rsh launcher calls: agent [options] HOST COMMAND...
# Host h<i> is namespace ${prefix}h<i>, with hostname h<i>.
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case \$host in h[0-9]*) ;; *) echo "netbench agent: unknown host \$host" >&2; exit 1 ;; esac
exec ip netns exec "${prefix}\$host" unshare --uts /bin/sh -c 'hostname "\$0" && eval "exec \$*"' "\$host" "\$@"
EOF
chmod +x "$work/agent"
seq -f "h%g slots=1" 0 $((hosts - 1)) >"$work/hostfile"
cores=$(nproc)
case $bind in
core) for ((h = 0; h < hosts; ++h)); do echo "rank $h=h$h slot=$((h % cores))"; done >"$work/rankfile"
      placement=(--rankfile "$work/rankfile") ;;
none) placement=(--bind-to none) ;;
openmpi) placement=() ;;
esac

[[ $nap == auto ]] && nap=$((hosts > cores ? 50 : 0))
napping=()
if ((nap > 0 && yield)); then
    cat >"$work/nap.c" <<'EOF'
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
/* Open MPI's idle loop calls sched_yield(); here the rank sleeps instead,
   so ranks sharing a core leave it to the one with work. */
static struct timespec nap = {0, 50000};
__attribute__((constructor)) static void init(void)
{
    const char* us = getenv("NETBENCH_NAP_US");
    if (us) nap.tv_nsec = atol(us) * 1000L;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* wake within 1 us of the nap */
}
int sched_yield(void) { return nanosleep(&nap, 0); }
EOF
    if command -v cc >/dev/null && cc -O2 -shared -fPIC -o "$work/nap.so" "$work/nap.c" 2>"$work/err"; then
        napping=(-x LD_PRELOAD="$work/nap.so" -x NETBENCH_NAP_US="$nap")
    else
        echo "netbench: no C compiler for --nap, idle ranks yield: $(cat "$work/err" 2>/dev/null)" >&2
        nap=0
    fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset OMPI_MCA_rmaps_base_oversubscribe OMPI_MCA_btl OMPI_MCA_pml OMPI_MCA_mpi_yield_when_idle
cmd=(mpirun -n "$hosts" --hostfile "$work/hostfile" ${placement[@]+"${placement[@]}"}
    --mca plm_rsh_agent "$work/agent" --mca plm_rsh_no_tree_spawn 1 --mca orte_tmpdir_base "$work/ompi"
    --mca pml ob1 --mca btl tcp,self --mca mpi_yield_when_idle "$yield" ${napping[@]+"${napping[@]}"}
    --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24
    "$@")
if ((verbose)); then
    echo "netbench: $hosts hosts on $cores cores, links at $rate${burst:+ (tbf burst $burst limit $limit)}," \
        "offload $offload, bind $bind, yield $yield, nap $nap us" >&2
    echo "netbench: ${cmd[*]}" >&2
fi
set +e
ip netns exec "${prefix}br" unshare --uts /bin/sh -c 'hostname head && exec "$@"' sh timeout -k 5 "$timeout_s" "${cmd[@]}"
rc=$?
set -e
if ((stats)); then
    for ((h = 0; h < hosts; ++h)); do
        for end in "${prefix}h$h eth0 up" "${prefix}br p$h down"; do
            set -- $end
            echo "netbench: h$h ${3}link:$(ip netns exec "$1" tc -s qdisc show dev "$2" | awk '/Sent/ {print; exit}')" >&2
        done
    done
fi
exit $rc
