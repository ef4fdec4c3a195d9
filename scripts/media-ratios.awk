# Reads `go test -bench 'Capture100MB|Upload100MB'` output, passes it
# through, and prints each livetab figure as a ratio of the plain-Chromium
# (exec) one of the same run: figures move between machines, ratios less.
# With -count N each side is the median of its N runs, so one run slowed by
# the machine does not make the ratio.
{ print }
/^Benchmark/ {
  name = $1; sub(/-[0-9]+$/, "", name)
  for (i = 2; i < NF; i++) if ($(i + 1) == "MB/s") { runs[name] = runs[name] " " $i }
}
function median(list,    v, n, i, j, t) {
  n = split(list, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
END {
  for (n in runs) mbs[n] = median(runs[n])
  for (n in mbs) {
    if (n !~ /\/livetab/) continue
    e = n; sub(/\/livetab/, "/exec", e)
    # The transfer channel has no plain-Chromium row: set it beside the
    # path it stands in for there (the in-page upload, the blob's ladder).
    if (!(e in mbs)) sub(/-channel$/, "", e)
    if (e in mbs && mbs[e] > 0) printf "ratio %s / %s: %.2f× (medians of %d and %d runs)\n", n, e, mbs[n] / mbs[e], split(runs[n], _a, " "), split(runs[e], _b, " ")
  }
}
