# overlap.gp: chapter 2.4. The backward pass of a 4-layer model, with and without overlap.
# Without it, the gradients' allreduce starts after the last layer; with it, each bucket's
# allreduce starts as soon as its layer's gradients exist, and runs while earlier layers
# compute. The times are a schematic, not measurements.
# Run: gnuplot -e "outfile='overlap.svg'" overlap.gp   (tools/build-book does)
if (!exists("outfile")) outfile = "overlap.svg"
set terminal svg size 760,300 fixed font "DejaVu Sans,11" background rgb "white"
set output outfile

# start end row label kind(0 compute, 1 communication)
$bars << EOD
0 2 4 "layer 4" 0
2 4 4 "layer 3" 0
4 6 4 "layer 2" 0
6 8 4 "layer 1" 0
8 9.5 3.3 "bucket 4" 1
9.5 11 3.3 "bucket 3" 1
11 12.5 3.3 "bucket 2" 1
12.5 14 3.3 "bucket 1" 1
0 2 1.7 "layer 4" 0
2 4 1.7 "layer 3" 0
4 6 1.7 "layer 2" 0
6 8 1.7 "layer 1" 0
2 3.5 1 "bucket 4" 1
4 5.5 1 "bucket 3" 1
6 7.5 1 "bucket 2" 1
8 9.5 1 "bucket 1" 1
EOD

set border 1 lc rgb "#8c959f"
set xrange [0:14.6]
set yrange [0.4:4.6]
set xtics 0,2,14 nomirror out textcolor rgb "#59636e"
set ytics ("compute" 4, "allreduce" 3.3, "compute" 1.7, "allreduce" 1) nomirror scale 0 textcolor rgb "#1f2328"
set xlabel "time (a schematic: a layer's backward pass takes 2 units, a bucket's allreduce 1.5)" textcolor rgb "#59636e"
set label 1 "no overlap: the step ends at 14" at 0,4.48 textcolor rgb "#1f2328" font "DejaVu Sans Bold,11"
set label 2 "overlapped, bucket by bucket: the step ends at 9.5" at 0,2.18 textcolor rgb "#1f2328" font "DejaVu Sans Bold,11"
set arrow 1 from 9.5,0.55 to 14,0.55 heads size 0.15,90 lc rgb "#b38600" lw 1.5
set label 3 "saved" at 11.75,0.72 center textcolor rgb "#8a5a00"
set style fill solid 1.0 border lc rgb "#5b6b7a"
unset key

plot $bars using (($1+$2)/2):3:1:2:($3-0.25):($3+0.25):($5 == 0 ? 0xdbe9f7 : 0xa9d49d) \
       with boxxyerror lc rgb variable, \
     $bars using (($1+$2)/2):3:4 with labels font "DejaVu Sans,10" textcolor rgb "#1f2328"
