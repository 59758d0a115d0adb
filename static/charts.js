// The console's charts: each section with data-usage-src loads its charts' JSON from that
// address and draws them with uPlot (vendored in static/), each with its data as a table
// under it (a <details>), filled from the same JSON. Series of kind "stack" are stacked areas,
// "line" lines over them, "count" bars on a chart of their own. Pages without charts do not
// load this file. window.arbiterCharts keeps each chart's data and plot by id (the browser
// tests read them); the section's data-fetch-ms and data-render-ms say how long the JSON took
// to come and the charts to draw.
(function () {
  "use strict";

  var palette = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2",
    "#9d755d", "#eeca3b", "#ff9da6", "#79706e", "#bab0ac", "#2f4b7c"];
  var named = {
    nonPreemptible: "#a15c00", preemptible: "#2f6fdf", borrowed: "#9bb9ee",
    deserved: "#1b1f24", fairShare: "#7b3294", pending: "#d62728", capacity: "#555555",
    preemptions: "#b3261e", reclaims: "#a15c00"
  };
  var dashes = { deserved: [6, 4], capacity: [2, 3], pending: [] };

  window.arbiterCharts = {};

  // The time axis in UTC on a 24-hour clock, days as "26 Nov" (uPlot's stamp table: tick
  // increment in seconds, then the label by default and where the year, month or day changes).
  var timeStamps = [
    [86400 * 365, "{YYYY}", null, null, null, null, null, null, 1],
    [86400 * 28, "{MMM}", "\n{YYYY}", null, null, null, null, null, 1],
    [86400, "{D} {MMM}", "\n{YYYY}", null, null, null, null, null, 1],
    [3600, "{HH}:{mm}", "\n{D} {MMM} {YYYY}", null, "\n{D} {MMM}", null, null, null, 1],
    [60, "{HH}:{mm}", "\n{D} {MMM} {YYYY}", null, "\n{D} {MMM}", null, null, null, 1]
  ];

  function colour(s, i) {
    if (named[s.key]) {
      return named[s.key];
    }
    return s.label === "others" ? "#c8c8c8" : palette[i % palette.length];
  }

  function fmt(v) {
    return v === null || v === undefined ? "—" : (Math.round(v * 100) / 100).toString();
  }

  function utc(seconds) {
    return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
  }

  // stacked turns the stack series into running sums, bottom first, keeping the raw values
  // for the legend and the table; a bucket nothing recorded stays a gap.
  function stacked(chart) {
    var sums = [];
    var out = [];
    chart.series.forEach(function (s) {
      if (s.kind !== "stack") {
        return;
      }
      var vals = s.values.map(function (v, i) {
        if (v === null) {
          return null;
        }
        sums[i] = (sums[i] || 0) + v;
        return sums[i];
      });
      out.push({ series: s, values: vals });
    });
    return out;
  }

  // few reports whether a series has too few values for a line to show (a history of minutes
  // in hourly buckets is one point): such a series is drawn as dots.
  function few(values) {
    var n = 0;
    values.forEach(function (v) { if (v !== null) { n++; } });
    return n < 3;
  }

  function plot(chart, box, width) {
    var counts = chart.series.some(function (s) { return s.kind === "count"; });
    var stacks = stacked(chart);
    var data = [chart.at];
    var series = [{ label: "Time (UTC)", value: function (u, v) { return v === null ? "—" : utc(v); } }];
    var raw = [null];
    // the top of the stack first, so each lower area is drawn over the one above it
    stacks.slice().reverse().forEach(function (st) {
      var i = chart.series.indexOf(st.series);
      var c = colour(st.series, i);
      data.push(st.values);
      raw.push(st.series.values);
      series.push({ label: st.series.label, stroke: c, fill: c, width: 1, points: { show: few(st.values), size: 7, fill: c } });
    });
    chart.series.forEach(function (s, i) {
      if (s.kind === "stack") {
        return;
      }
      var c = colour(s, i);
      var opts = { label: s.label, stroke: c, width: s.kind === "count" ? 1 : 2, points: { show: s.kind !== "count" && few(s.values), size: 7 } };
      if (s.kind === "count") {
        opts.fill = c;
        opts.paths = uPlot.paths.bars({ size: [0.8, 24], gap: 1 });
      }
      if (dashes[s.key]) {
        opts.dash = dashes[s.key];
      }
      data.push(s.values);
      raw.push(s.values);
      series.push(opts);
    });
    series.forEach(function (s, si) {
      if (si > 0) {
        s.value = function (u, v, sidx, idx) { return idx === null ? "—" : fmt(raw[si][idx]); };
      }
    });
    var opts = {
      width: width,
      height: counts ? 140 : 260,
      series: series,
      scales: { x: { time: true }, y: { range: function (u, lo, hi) { return [0, Math.max(hi || 0, 1) * 1.05]; } } },
      axes: [{ values: timeStamps }, { label: counts ? "events" : "GPUs", size: 50 }],
      legend: { live: true },
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); }
    };
    return new uPlot(opts, data, box);
  }

  function table(chart) {
    var t = document.createElement("table");
    t.className = "chart-data";
    var cap = document.createElement("caption");
    cap.className = "sr-only";
    cap.textContent = chart.title;
    t.appendChild(cap);
    var head = t.createTHead().insertRow();
    ["Time (UTC)"].concat(chart.series.map(function (s) { return s.label; })).forEach(function (label, i) {
      var th = document.createElement("th");
      th.scope = "col";
      th.textContent = label;
      if (i > 0) {
        th.className = "num";
      }
      head.appendChild(th);
    });
    var body = t.createTBody();
    chart.at.forEach(function (at, i) {
      var row = body.insertRow();
      var th = document.createElement("th");
      th.scope = "row";
      th.textContent = utc(at);
      row.appendChild(th);
      chart.series.forEach(function (s) {
        var td = row.insertCell();
        td.className = "num";
        td.textContent = fmt(s.values[i]);
      });
    });
    return t;
  }

  function figure(chart) {
    var fig = document.createElement("figure");
    fig.className = "chart";
    fig.id = chart.id;
    var cap = document.createElement("figcaption");
    cap.textContent = chart.title;
    fig.appendChild(cap);
    var box = document.createElement("div");
    box.className = "chart-plot";
    fig.appendChild(box);
    var details = document.createElement("details");
    details.className = "chart-table";
    var summary = document.createElement("summary");
    summary.textContent = "Table of this chart's data";
    details.appendChild(summary);
    var scroll = document.createElement("div");
    scroll.className = "table-scroll";
    scroll.appendChild(table(chart));
    details.appendChild(scroll);
    fig.appendChild(details);
    return { fig: fig, box: box };
  }

  function load(section) {
    var status = section.querySelector(".usage-status");
    var list = section.querySelector(".chart-list");
    var start = performance.now();
    fetch(section.getAttribute("data-usage-src"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (res) {
        if (!res.ok) {
          throw new Error("the server answered " + res.status);
        }
        return res.json();
      })
      .then(function (body) {
        var fetched = performance.now();
        var plots = [];
        list.textContent = "";
        body.charts.forEach(function (chart) {
          var f = figure(chart);
          list.appendChild(f.fig);
          var u = plot(chart, f.box, Math.max(f.box.clientWidth, 200));
          plots.push({ u: u, box: f.box });
          window.arbiterCharts[chart.id] = { chart: chart, plot: u };
        });
        var recorded = body.charts.some(function (c) {
          return c.series.some(function (s) { return s.values.some(function (v) { return v !== null; }); });
        });
        var empty = body.emptyPools || [];
        var emptyWords = empty.length === 0 ? "" : (empty.length === 1 ? "Node pool " + empty[0] + " has" :
          "Node pools " + empty.slice(0, -1).join(", ") + " and " + empty[empty.length - 1] + " have") +
          " had no GPUs and held no work in this period.";
        status.textContent = body.charts.length === 0 && empty.length === 0 ? "No node pool has recorded usage yet." :
          ((body.charts.length === 0 || recorded ? "" : "Nothing was recorded in this period. ") + emptyWords).trim();
        section.setAttribute("data-fetch-ms", (fetched - start).toFixed(1));
        section.setAttribute("data-render-ms", (performance.now() - fetched).toFixed(1));
        section.setAttribute("data-ready", "true");
        var pending = null;
        window.addEventListener("resize", function () {
          clearTimeout(pending);
          pending = setTimeout(function () {
            plots.forEach(function (p) { p.u.setSize({ width: Math.max(p.box.clientWidth, 200), height: p.u.height }); });
          }, 100);
        });
      })
      .catch(function (err) {
        status.textContent = "The charts could not be loaded (" + err.message + "); the CSV holds the same data.";
        section.setAttribute("data-ready", "error");
      });
  }

  function start() {
    if (typeof uPlot === "undefined") {
      return;
    }
    document.querySelectorAll("[data-usage-src]").forEach(load);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
