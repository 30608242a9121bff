# pipeline.gp: chapter 3.2. GPipe and 1F1B on p = 4 stages with m = 8 micro-batches, a forward
# taking 1 unit and a backward 2, handoffs instant: the timelines that a small simulation of
# the two schedules gives. Both steps end at (m + p - 1) x 3 = 33; the grey gaps are the bubble.
# Run: gnuplot -e "outfile='pipeline.svg'" pipeline.gp   (tools/build-book does)
if (!exists("outfile")) outfile = "pipeline.svg"
set terminal svg size 900,420 fixed font "DejaVu Sans,11" background rgb "white"
set output outfile

# start end row label kind(0 forward, 1 backward)
$bars << EOD
0 1 9.6 "F1" 0
1 2 9.6 "F2" 0
1 2 8.6 "F1" 0
2 3 9.6 "F3" 0
2 3 8.6 "F2" 0
2 3 7.6 "F1" 0
3 4 9.6 "F4" 0
3 4 8.6 "F3" 0
3 4 7.6 "F2" 0
3 4 6.6 "F1" 0
4 5 9.6 "F5" 0
4 5 8.6 "F4" 0
4 5 7.6 "F3" 0
4 5 6.6 "F2" 0
5 6 9.6 "F6" 0
5 6 8.6 "F5" 0
5 6 7.6 "F4" 0
5 6 6.6 "F3" 0
6 7 9.6 "F7" 0
6 7 8.6 "F6" 0
6 7 7.6 "F5" 0
6 7 6.6 "F4" 0
7 8 9.6 "F8" 0
7 8 8.6 "F7" 0
7 8 7.6 "F6" 0
7 8 6.6 "F5" 0
8 9 8.6 "F8" 0
8 9 7.6 "F7" 0
8 9 6.6 "F6" 0
9 10 7.6 "F8" 0
9 10 6.6 "F7" 0
10 11 6.6 "F8" 0
11 13 6.6 "B1" 1
13 15 7.6 "B1" 1
13 15 6.6 "B2" 1
15 17 8.6 "B1" 1
15 17 7.6 "B2" 1
15 17 6.6 "B3" 1
17 19 9.6 "B1" 1
17 19 8.6 "B2" 1
17 19 7.6 "B3" 1
17 19 6.6 "B4" 1
19 21 9.6 "B2" 1
19 21 8.6 "B3" 1
19 21 7.6 "B4" 1
19 21 6.6 "B5" 1
21 23 9.6 "B3" 1
21 23 8.6 "B4" 1
21 23 7.6 "B5" 1
21 23 6.6 "B6" 1
23 25 9.6 "B4" 1
23 25 8.6 "B5" 1
23 25 7.6 "B6" 1
23 25 6.6 "B7" 1
25 27 9.6 "B5" 1
25 27 8.6 "B6" 1
25 27 7.6 "B7" 1
25 27 6.6 "B8" 1
27 29 9.6 "B6" 1
27 29 8.6 "B7" 1
27 29 7.6 "B8" 1
29 31 9.6 "B7" 1
29 31 8.6 "B8" 1
31 33 9.6 "B8" 1
0 1 4.2 "F1" 0
1 2 4.2 "F2" 0
1 2 3.2 "F1" 0
2 3 4.2 "F3" 0
2 3 3.2 "F2" 0
2 3 2.2 "F1" 0
3 4 4.2 "F4" 0
3 4 3.2 "F3" 0
3 4 2.2 "F2" 0
3 4 1.2 "F1" 0
4 6 1.2 "B1" 1
6 7 1.2 "F2" 0
6 8 2.2 "B1" 1
7 9 1.2 "B2" 1
8 9 2.2 "F3" 0
8 10 3.2 "B1" 1
9 10 1.2 "F3" 0
9 11 2.2 "B2" 1
10 11 3.2 "F4" 0
10 12 4.2 "B1" 1
10 12 1.2 "B3" 1
11 12 2.2 "F4" 0
11 13 3.2 "B2" 1
12 13 4.2 "F5" 0
12 13 1.2 "F4" 0
12 14 2.2 "B3" 1
13 14 3.2 "F5" 0
13 15 4.2 "B2" 1
13 15 1.2 "B4" 1
14 15 2.2 "F5" 0
14 16 3.2 "B3" 1
15 16 4.2 "F6" 0
15 16 1.2 "F5" 0
15 17 2.2 "B4" 1
16 17 3.2 "F6" 0
16 18 4.2 "B3" 1
16 18 1.2 "B5" 1
17 18 2.2 "F6" 0
17 19 3.2 "B4" 1
18 19 4.2 "F7" 0
18 19 1.2 "F6" 0
18 20 2.2 "B5" 1
19 20 3.2 "F7" 0
19 21 4.2 "B4" 1
19 21 1.2 "B6" 1
20 21 2.2 "F7" 0
20 22 3.2 "B5" 1
21 22 4.2 "F8" 0
21 22 1.2 "F7" 0
21 23 2.2 "B6" 1
22 23 3.2 "F8" 0
22 24 4.2 "B5" 1
22 24 1.2 "B7" 1
23 24 2.2 "F8" 0
23 25 3.2 "B6" 1
24 25 1.2 "F8" 0
24 26 2.2 "B7" 1
25 27 4.2 "B6" 1
25 27 1.2 "B8" 1
26 28 3.2 "B7" 1
27 29 2.2 "B8" 1
28 30 4.2 "B7" 1
29 31 3.2 "B8" 1
31 33 4.2 "B8" 1
EOD

set border 1 lc rgb "#8c959f"
set xrange [0:33.5]
set yrange [0.2:11.2]
set xtics 0,3,33 nomirror out textcolor rgb "#59636e"
set ytics ("stage 0" 9.6, "stage 1" 8.6, "stage 2" 7.6, "stage 3" 6.6, \
           "stage 0" 4.2, "stage 1" 3.2, "stage 2" 2.2, "stage 3" 1.2) nomirror scale 0 \
           textcolor rgb "#1f2328"
set xlabel "time (a forward F takes 1 unit, a backward B 2; micro-batches 1 .. 8)" textcolor rgb "#59636e"
set label 1 "GPipe: every forward, then every backward; stage 0 stashes 8 micro-batches" \
    at 0,10.7 textcolor rgb "#1f2328" font "DejaVu Sans Bold,11"
set label 2 "1F1B: warm-up, one forward and one backward in turn, cool-down; stage 0 stashes 4" \
    at 0,5.3 textcolor rgb "#1f2328" font "DejaVu Sans Bold,11"
set object 1 rect from 0,6.2 to 33,10.0 fc rgb "#eef1f4" fs solid 1.0 noborder behind
set object 2 rect from 0,0.8 to 33,4.6 fc rgb "#eef1f4" fs solid 1.0 noborder behind
set style fill solid 1.0 border lc rgb "#5b6b7a"
unset key

plot $bars using (($1+$2)/2):3:1:2:($3-0.38):($3+0.38):($5 == 0 ? 0xdbe9f7 : 0xa9d49d) \
       with boxxyerror lc rgb variable, \
     $bars using (($1+$2)/2):3:4 with labels font "DejaVu Sans,9" textcolor rgb "#1f2328"
