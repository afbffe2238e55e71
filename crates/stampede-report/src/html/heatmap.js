// The latency heatmap (heatmap.rs): draws the cells of
// <script id="latency-heatmap-data"> on <canvas id="latency-heatmap">, one
// column per interval, one row per band of latency (log scale), darker for
// more responses; hovering a column shows its percentiles. A live page
// (--web) calls window.stampedeHeatmap.draw() after each update replaced
// the content; a page without a heatmap draws nothing.
(function () {
  "use strict";
  function ms(us) { return (us / 1000).toFixed(3) + " ms"; }

  function draw() {
    var source = document.getElementById("latency-heatmap-data");
    var c = document.getElementById("latency-heatmap");
    if (!source || !c) return;
    var d = JSON.parse(source.textContent), g = c.getContext("2d");
    var n = d.columns.length, w = c.width / n, h = c.height / d.rows, top = 0;
    g.clearRect(0, 0, c.width, c.height);
    d.columns.forEach(function (col) { col[7].forEach(function (v) { if (v > top) top = v; }); });
    d.columns.forEach(function (col, x) {
      col[7].forEach(function (v, y) {
        if (!v) return;
        var t = Math.log(1 + v) / Math.log(1 + top);
        g.fillStyle = "rgba(200,30,30," + (0.08 + 0.92 * t).toFixed(3) + ")";
        g.fillRect(x * w, c.height - (y + 1) * h, Math.max(w, 1), Math.max(h, 1));
      });
    });
    g.fillStyle = "#555"; g.font = "11px sans-serif";
    for (var r = 0; r < d.rows; r += d.per_decade / 2) {
      g.fillText(ms(Math.pow(10, (d.first_row + r) / d.per_decade)), 2, c.height - r * h - 2);
    }
    var tip = document.getElementById("latency-heatmap-tip");
    c.addEventListener("mousemove", function (e) {
      var b = c.getBoundingClientRect(), x = Math.floor((e.clientX - b.left) / b.width * n);
      var col = d.columns[Math.min(Math.max(x, 0), n - 1)];
      tip.textContent = col[0].toFixed(3) + " s +" + col[1].toFixed(3) + " s: " + col[2] + " responses, p50 " +
        ms(col[3]) + ", p90 " + ms(col[4]) + ", p99 " + ms(col[5]) + ", max " + ms(col[6]);
    });
  }

  draw();
  window.stampedeHeatmap = { draw: draw };
})();
