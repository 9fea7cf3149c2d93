# Draws perf_throughput.svg and perf_latency.svg from the .dat files that
# keylane_bench writes into its results folder. Called by keylane_bench as
#   gnuplot -e "dir='results'; works='0 1000'; nseries=10; rate='200000'" plot.gp
# Each .dat: a line per workload, a column per way ('?' = missing).

set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.95
set logscale y
set grid ytics mytics
set key outside right top vertical font ",10"
set xtics nomirror
set ytics nomirror
nworks = words(works)

# Baselines in warm and grey tones, keylane in blues and greens (sharing
# darker, stealing lighter); enough distinct colours for every series.
colors = "#7f7f7f #d62728 #ff7f0e #bcbd22 #8c564b #08519c #6baed6 #006d2c #74c476 #54278f #9e9ac8 #e377c2 #17becf #000000"
do for [i = 1:words(colors)] {
  set linetype i linecolor rgb word(colors, i)
}

label(w) = (w eq "0") ? "handler work 0" : sprintf("handler work %s ns", w)

set terminal svg size 1300, 430 * nworks dynamic noenhanced font "sans,11" background "white"
set output dir."/perf_throughput.svg"
set multiplot layout nworks, 1 title "Throughput per way (events/s, median of runs; higher is better)"
do for [k = 1:nworks] {
  w = word(works, k)
  set title label(w)
  set ylabel "events/s"
  plot for [i = 2:nseries + 1] dir."/throughput_".w.".dat" using i:xtic(1) title columnheader(i)
}
unset multiplot
set output

set terminal svg size 1300, 330 * 2 * nworks dynamic noenhanced font "sans,11" background "white"
set output dir."/perf_latency.svg"
set multiplot layout 2 * nworks, 1 title sprintf("Latency from scheduled submit to output, open loop at %s events/s (us, median of runs; lower is better)", rate)
do for [k = 1:nworks] {
  w = word(works, k)
  set ylabel "us"
  do for [q in "p50 p99"] {
    set title label(w)." — ".q
    plot for [i = 2:nseries + 1] dir."/".q."_".w.".dat" using i:xtic(1) title columnheader(i)
  }
}
unset multiplot
set output
