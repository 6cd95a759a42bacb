#!/bin/sh
# `npm start` and `npm run worker`: node with the service's flags (docs/operations.md, "The node
# process's flags"), then the arguments given. With one core to run on (CPU affinity, as taskset
# or a cpuset sets it, or a cgroup v2 CPU quota of less than two cores), V8 collects garbage on
# the main thread alone: its helper threads could only run instead of the main thread there, and
# a full collection's concurrent marking held requests for its whole length.
flags="--max-semi-space-size=32"
cores=$(nproc 2>/dev/null || echo 2)
# cpu.max reads "max 100000" (no quota) or "<quota> <period>" in microseconds. NODE_SH_CPU_MAX
# names another file to read instead (the tests' way to give it a quota).
cpu_max=${NODE_SH_CPU_MAX:-/sys/fs/cgroup/cpu.max}
if [ -r "$cpu_max" ]; then
  read -r quota period < "$cpu_max"
  # Only two whole numbers are a quota ("max", or a file of another shape, is none).
  case "$quota:$period" in
    *[!0-9:]* | :* | *:) ;;
    *) if [ "$quota" -lt $((2 * period)) ]; then cores=1; fi ;;
  esac
fi
if [ "$cores" -le 1 ]; then flags="$flags --single-threaded-gc"; fi
exec node $flags "$@"
