// stampede run --web: the live page's script, after the report's own
// (crates/stampede-report/src/html/charts.js). Server-sent events from
// /events bring the report of the run so far once a second; it replaces
// the content, and the charts and the latency heatmap redraw. When the run
// ends the page reloads and is the final report. The Stop button asks /stop (with the header that
// only a same-origin page can send), which ends the run as Ctrl-C does
// (src/session/exporters/web.rs).
(function () {
  "use strict";
  var status = document.getElementById("live-status");
  var button = document.getElementById("live-stop");
  var updates = 0;

  button.addEventListener("click", function () {
    button.disabled = true;
    status.textContent = "stopping\u2026";
    fetch("/stop", { method: "POST", headers: { "X-Stampede": "stop" } }).then(function (response) {
      if (!response.ok) status.textContent = "stop refused: " + response.status;
    }, function () {
      status.textContent = "stop failed: the server did not answer";
    });
  });

  var events = new EventSource("/events");
  events.addEventListener("update", function (event) {
    var update = JSON.parse(event.data);
    document.getElementById("report").innerHTML = update.report;
    document.getElementById("chart-data").textContent = update.charts;
    window.stampedeCharts.draw(JSON.parse(update.charts));
    window.stampedeHeatmap.draw();
    updates += 1;
    status.setAttribute("data-updates", String(updates));
    if (!button.disabled) status.textContent = "live \u00b7 " + update.elapsed + " measured";
  });
  events.addEventListener("done", function () {
    events.close();
    status.textContent = "run finished: loading the report\u2026";
    window.location.reload();
  });
  events.addEventListener("error", function () {
    if (events.readyState === EventSource.CLOSED) status.textContent = "disconnected";
  });
})();
