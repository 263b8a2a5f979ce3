// Switchboard console: live updates of the agents list (server-sent
// events) and toggles without a page load. Every page works without it.
"use strict";

(function () {
  var body = document.body;

  // Toggles: send the switch pressed with fetch and flip it in place; the
  // stream then brings the list as stored.
  document.addEventListener("submit", function (ev) {
    var form = ev.target, button = ev.submitter;
    if (!form.classList || !form.classList.contains("toggles") || !button || !window.fetch) {
      return;
    }
    ev.preventDefault();
    var data = new URLSearchParams(new FormData(form));
    data.set("set", button.value);
    fetch(form.action, {
      method: "POST", body: data, credentials: "same-origin",
      headers: { "X-Console-Fetch": "1" }
    }).then(function (res) {
      if (res.status !== 204) {
        window.location.assign("/dashboard"); // the page says how things stand
        return;
      }
      var parts = button.value.split(" "), on = parts[1] === "true";
      button.setAttribute("aria-checked", on ? "true" : "false");
      button.value = parts[0] + (on ? " false" : " true");
      button.textContent = on ? "accepting" : "paused";
    });
  });

  // Copy buttons: copy the text of the element they name.
  document.addEventListener("click", function (ev) {
    var button = ev.target.closest && ev.target.closest("button[data-copy]");
    if (!button || !navigator.clipboard) {
      return;
    }
    var source = document.getElementById(button.getAttribute("data-copy"));
    navigator.clipboard.writeText(source.textContent).then(function () {
      button.textContent = "Copied";
    });
  });

  var url = body.getAttribute("data-events");
  if (!url || !window.EventSource) {
    return;
  }
  var status = document.getElementById("live-status");
  var list = document.getElementById("agents");
  var source = new EventSource(url);
  source.addEventListener("open", function () {
    body.setAttribute("data-live", "on");
    if (status) { status.textContent = "Live updates: on."; }
  });
  source.addEventListener("error", function () {
    body.setAttribute("data-live", "off");
    if (status) { status.textContent = "Live updates: reconnecting…"; }
  });
  source.addEventListener("agents", function (ev) {
    var active = document.activeElement;
    var focused = active && active.getAttribute && active.getAttribute("aria-label");
    // The server rendered (and escaped) this HTML with the page's own
    // template.
    list.innerHTML = JSON.parse(ev.data).html;
    if (focused && window.CSS && CSS.escape) {
      var again = list.querySelector('[aria-label="' + CSS.escape(focused) + '"]');
      if (again) { again.focus(); }
    }
    body.setAttribute("data-updates", String(Number(body.getAttribute("data-updates") || "0") + 1));
  });
  source.addEventListener("signedout", function () {
    source.close();
    window.location.assign("/dashboard");
  });
})();
