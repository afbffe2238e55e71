// stampede's HTML report: builds every chart with uPlot (inlined above this
// script) from the JSON in <script id="chart-data">, which the Rust side
// writes (crates/stampede-report/src/html/charts.rs says what each field
// means). Nothing here fetches anything: the report works offline. A live
// page (stampede run --web) redraws through window.stampedeCharts.draw.
(function () {
  "use strict";
  var PALETTE = ["#2f6fde", "#1e8e3e", "#b9770e", "#c0392b", "#7b3fb5",
    "#0f8b8d", "#d35400", "#5d6678", "#e84393", "#6c5ce7"];
  var HEIGHT = 300;

  function fmt(v, decimals, unit) {
    if (v == null || !isFinite(v)) return "\u2014";
    var text = v.toLocaleString("en-US", {
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals
    });
    return unit ? text + " " + unit : text;
  }

  // The spectrum's x is 1/(1-q): 1 is 0%, 10 is 90%, 100 is 99%...
  function percentile(v) {
    if (v == null || !isFinite(v) || v < 1) return "\u2014";
    var digits = Math.max(1, Math.floor(Math.log10(v)) - 1);
    return (100 * (1 - 1 / v)).toFixed(digits) + "%";
  }

  function nines(n) {
    if (n === 0) return "0%";
    if (n === 1) return "90%";
    return "99" + (n > 2 ? "." + "9".repeat(n - 2) : "") + "%";
  }

  // Axes start at zero (counts, rates and latencies are never negative)
  // and keep a little headroom over the highest value.
  function fromZero(u, min, max) {
    if (max == null || !isFinite(max) || max <= 0) max = 1;
    var low = min != null && isFinite(min) && min < 0 ? min * 1.08 : 0;
    return [low, max * 1.08];
  }

  function xAxisOptions(spec) {
    var axis = { label: spec.x.label, stroke: "#5d6678", grid: { stroke: "#eef0f4" } };
    if (spec.kind === "bars") {
      axis.splits = function () { return spec.xs.slice(); };
      axis.values = function (u, splits) {
        return splits.map(function (i) { return spec.categories[i] || ""; });
      };
      axis.grid = { show: false };
    } else if (spec.kind === "spectrum") {
      axis.splits = function (u) {
        var top = u.scales.x.max || 10;
        var out = [];
        for (var n = 0, v = 1; v <= top * 1.0001 && n < 9; n++, v *= 10) out.push(v);
        return out;
      };
      axis.values = function (u, splits) {
        return splits.map(function (v) { return nines(Math.round(Math.log10(v))); });
      };
    }
    return axis;
  }

  function xScale(spec) {
    if (spec.kind === "spectrum") return { time: false, distr: 3, log: 10 };
    if (spec.kind === "bars") {
      var n = Math.max(spec.xs.length, 1);
      return { time: false, range: function () { return [-0.5, n - 0.5]; } };
    }
    if (spec.xs.length <= 150 && spec.series.some(function (s) { return s.style === "bars"; })) {
      // Bars stand on both sides of their x: keep half a step of room at
      // either end so the first and last bars are not cut in half.
      var step = 1;
      for (var i = 1; i < spec.xs.length; i++) step = Math.min(step, spec.xs[i] - spec.xs[i - 1]);
      return {
        time: false,
        range: function (u, min, max) {
          if (min == null || max == null) return [0, 1];
          return [min - step / 2, max + step / 2];
        }
      };
    }
    return { time: false };
  }

  function xSeries(spec) {
    var value;
    if (spec.kind === "bars") {
      value = function (u, v) { return v == null ? "\u2014" : spec.categories[v] || ""; };
    } else if (spec.kind === "spectrum") {
      value = function (u, v) { return percentile(v); };
    } else {
      value = function (u, v) { return fmt(v, spec.x.decimals, spec.x.unit); };
    }
    return { label: spec.x.label, value: value };
  }

  function dataSeries(spec, s, i) {
    var color = PALETTE[i % PALETTE.length];
    var axis = s.side === "right" && spec.y2 ? spec.y2 : spec.y;
    var out = {
      label: s.name,
      scale: s.side === "right" && spec.y2 ? "y2" : "y",
      stroke: color,
      width: 2,
      spanGaps: true,
      value: function (u, v) { return fmt(v, axis.decimals, axis.unit); },
      points: { show: s.style === "points", size: 7, fill: color }
    };
    if (s.style === "dashed") out.dash = [8, 5];
    if (drawnAsBars(spec, s)) {
      // A zero is drawn as no bar at all (see barValues); the cursor
      // still says 0 there.
      out.value = function (u, v) { return fmt(v == null ? 0 : v, axis.decimals, axis.unit); };
      var opts = { size: [spec.kind === "bars" ? 0.6 : 0.4, 80], gap: 1 };
      if (s.align) opts.align = s.align;
      out.paths = uPlot.paths.bars(opts);
      out.fill = color + "aa";
      out.width = 1;
      out.spanGaps = false;
      out.points = { show: false };
    }
    return out;
  }

  // Bars over time read well while each is a few pixels wide; on a long
  // series they would merge into a block, so those become lines.
  function drawnAsBars(spec, s) {
    return s.style === "bars" && (spec.kind === "bars" || spec.xs.length <= 150);
  }

  // A bar series' values as drawn: a zero-height bar would still stroke its
  // 1-px outline, a dash on the axis for every zero, so zeros are left out.
  function barValues(spec, s) {
    if (!drawnAsBars(spec, s)) return s.values;
    return s.values.map(function (v) { return v === 0 ? null : v; });
  }

  function options(spec, width) {
    var series = [xSeries(spec)];
    var scales = { x: xScale(spec), y: { range: fromZero } };
    var axes = [
      xAxisOptions(spec),
      { label: spec.y.label, stroke: "#5d6678", grid: { stroke: "#eef0f4" }, size: 64 }
    ];
    spec.series.forEach(function (s, i) { series.push(dataSeries(spec, s, i)); });
    if (spec.y2) {
      scales.y2 = { range: fromZero };
      axes.push({ label: spec.y2.label, scale: "y2", side: 1, stroke: "#5d6678",
        grid: { show: false }, size: 64 });
    }
    return {
      title: spec.title,
      // uPlot leaves half the x axis' size (25 px) right of the plot for
      // its last label: too little for `99.9999%`, centred on the end of a
      // spectrum's axis. A right axis makes its own room.
      padding: spec.kind === "spectrum" && !spec.y2 ? [null, 40, null, null] : undefined,
      width: width,
      height: HEIGHT,
      series: series,
      scales: scales,
      axes: axes,
      legend: { show: true, live: true },
      cursor: { drag: { x: spec.kind !== "bars", y: false } }
    };
  }

  function hasData(spec) {
    return spec.series.some(function (s) {
      return s.values.some(function (v) { return v != null; });
    });
  }

  function data(spec) {
    if (!hasData(spec)) {
      // Axes still drawn, over a placeholder x, with the "empty" note on top.
      var xs = spec.kind === "spectrum" ? [1, 10] : [0, 1];
      return [xs].concat(spec.series.map(function () { return [null, null]; }));
    }
    return [spec.xs].concat(spec.series.map(function (s) { return barValues(spec, s); }));
  }

  function describe(spec) {
    var x = spec.x.label + (spec.kind === "spectrum" ? " (log scale)" : "");
    var text = spec.title + ". x axis: " + x + "; y axis: " + spec.y.label;
    if (spec.y2) text += "; right axis: " + spec.y2.label;
    var names = spec.series.map(function (s) { return s.name; });
    return text + ". Series: " + names.join(", ") + ".";
  }

  function widthOf(el) {
    return Math.max(320, el.clientWidth - 10);
  }

  var drawn = [];

  // Draws every chart of `specs` into its container, replacing what an
  // earlier call drew (a live page calls it again with new data).
  function draw(specs) {
    drawn.forEach(function (d) { d.plot.destroy(); });
    drawn = [];
    specs.forEach(function (entry) {
      var el = document.querySelector('[data-chart="' + entry.id + '"]');
      if (!el) return;
      try {
        var plot = new uPlot(options(entry.chart, widthOf(el)), data(entry.chart), el);
        drawn.push({ el: el, plot: plot });
        // A canvas is opaque to screen readers: say in words what it shows.
        plot.ctx.canvas.setAttribute("role", "img");
        plot.ctx.canvas.setAttribute("aria-label", describe(entry.chart));
        if (!hasData(entry.chart)) {
          var note = document.createElement("div");
          note.className = "chart-empty";
          var text = document.createElement("span");
          text.textContent = entry.chart.empty;
          note.appendChild(text);
          el.appendChild(note);
        }
      } catch (error) {
        el.textContent = "chart not drawn: " + error;
        console.error("chart " + entry.id + ": " + error);
      }
    });
  }

  draw(JSON.parse(document.getElementById("chart-data").textContent));
  window.stampedeCharts = { draw: draw };

  var pending = null;
  window.addEventListener("resize", function () {
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () {
      drawn.forEach(function (d) { d.plot.setSize({ width: widthOf(d.el), height: HEIGHT }); });
    }, 100);
  });
})();
