SELECT 5 AS five, 2.5 AS half, 'abc' AS s \gset
SELECT 7 AS seven \gset p_
\set a debug(:five * 2)
\set b debug(:half * 2)
\set c debug(:five > 4)
\set d debug(:p_seven + :five)
\set r random(1, 10)
\if :r > 7
  \set br debug(1)
\elif :r > 3
  \set br debug(2)
\else
  \set br debug(3)
\endif
\if :c
  \set e debug(case when :a > 5 then :b else 0 end)
\endif
\sleep 1 us
\set f debug(:br * 100 + :r)
