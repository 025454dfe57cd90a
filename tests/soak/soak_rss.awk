# The RSS samples of scripts/soak.sh: one line per sample,
#   seconds daemon_kB box_kB workers_rss_kB workers_uss_kB workers
# Prints the curve (at most 20 rows, in MiB) and, for each series, the
# least-squares slope over the second half of the run and what it adds
# up to over that half as a share of the series' mean there.  Exits 1
# when a share is over pct (-v pct=10): memory that grows for the whole
# second half is a leak, not a warm-up (the event ring and libc's arenas
# fill in the first).
# The workers are judged one by one, by their own pages (USS) from the
# middle of the run to its end, for those alive all that time.  Their
# sums only inform: a worker restarted after a kill is forked from the
# daemon as it is now, and keeps a private copy of every daemon page the
# daemon writes after the fork, so the sums climb with each kill until
# every worker has been replaced once, though no worker grows.
function mib(kb) { return sprintf("%8.1f", kb / 1024) }
{
	n++
	t[n] = $1; s[1, n] = $2; s[2, n] = $3; s[3, n] = $5; s[4, n] = $4
	w[n] = $6
	for (f = 7; f <= NF; f++) {
		split($f, pu, ":")
		uss[n, pu[1]] = pu[2]
		pids[n] = pids[n] " " pu[1]
	}
}
END {
	name[1] = "daemon RSS"; name[2] = "box RSS"
	name[3] = "workers USS"; name[4] = "workers RSS"
	if (n < 8) {
		print "FAIL   too few RSS samples: " n
		exit 1
	}
	step = int((n + 19) / 20)
	printf "  %7s %8s %8s %8s %8s %4s\n", "t (s)", "daemon", "box", "wrk RSS", "wrk USS", "n"
	for (i = 1; i <= n; i++)
		if ((i - 1) % step == 0 || i == n)
			printf "  %7.0f %s %s %s %s %4d\n", t[i], mib(s[1, i]), mib(s[2, i]), mib(s[4, i]), mib(s[3, i]), w[i]
	half = t[n] / 2
	bad = 0
	print "  slope over the second half (" half " s .. " t[n] " s):"
	for (k = 1; k <= 4; k++) {
		m = 0; st = 0; sy = 0; stt = 0; sty = 0; first = 0
		for (i = 1; i <= n; i++) {
			if (t[i] < half)
				continue
			if (!first)
				first = t[i]
			m++; st += t[i]; sy += s[k, i]
			stt += t[i] * t[i]; sty += t[i] * s[k, i]
		}
		den = m * stt - st * st
		slope = den ? (m * sty - st * sy) / den : 0
		mean = sy / m
		share = mean ? 100 * slope * (t[n] - first) / mean : 0
		verdict = k >= 3 ? "info" : share > pct ? "FAIL" : "ok"
		if (share > pct && k < 3)
			bad = 1
		printf "  %-4s %-12s %+9.1f KiB/min, %+6.2f%% over the half (mean %.1f MiB)\n", verdict, name[k], slope * 60, share, mean / 1024
	}
	# the workers alive from the middle to the end: did they grow?
	for (mid = 1; mid < n && t[mid] < half; mid++)
		;
	split(pids[mid], ps, " ")
	kept = 0; a = 0; b = 0
	for (i in ps)
		if ((n, ps[i]) in uss) {
			kept++; a += uss[mid, ps[i]]; b += uss[n, ps[i]]
		}
	share = a ? 100 * (b - a) / a : 0
	verdict = share > pct ? "FAIL" : "ok"
	if (share > pct)
		bad = 1
	printf "  %-4s the %d workers alive from %.0f s to the end: USS %.1f -> %.1f MiB (%+.2f%%)\n", verdict, kept, t[mid], a / 1024, b / 1024, share
	exit bad
}
