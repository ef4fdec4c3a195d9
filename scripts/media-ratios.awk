# Reads `go test -bench 'Capture100MB|Upload100MB'` output, passes it
# through, and prints each livetab figure as a ratio of the plain-Chromium
# (exec) one of the same run: figures move between machines, ratios less.
{ print }
/^Benchmark/ {
  name = $1; sub(/-[0-9]+$/, "", name)
  for (i = 2; i < NF; i++) if ($(i + 1) == "MB/s") mbs[name] = $i
}
END {
  for (n in mbs) {
    if (n !~ /\/livetab/) continue
    e = n; sub(/\/livetab/, "/exec", e)
    # The transfer channel has no plain-Chromium row: set it beside the
    # path it stands in for there (the in-page upload, the blob's ladder).
    if (!(e in mbs)) sub(/-channel$/, "", e)
    if (e in mbs && mbs[e] > 0) printf "ratio %s / %s: %.2f×\n", n, e, mbs[n] / mbs[e]
  }
}
