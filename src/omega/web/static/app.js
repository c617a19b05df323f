// The page's only script: the chat's live stream and sending without a reload.
(function () {
  "use strict";
  var chat = document.getElementById("chat");
  if (!chat || !chat.dataset.live) { return; }
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var form = document.getElementById("chat-form");
  var text = document.getElementById("chat-text");
  var image = document.getElementById("chat-image");
  var typing = document.getElementById("typing");
  var errorBox = document.getElementById("chat-error");
  var seen = {};
  chat.querySelectorAll(".line").forEach(function (el) { seen[el.dataset.id] = true; });
  var assistant = document.querySelector(".brand").textContent;

  function scroll() { chat.scrollTop = chat.scrollHeight; }

  function add(e) {
    if (e.id && seen[e.id]) { return; }
    if (e.id) { seen[e.id] = true; }
    var line = document.createElement("div");
    line.className = "line " + e.direction + " kind-" + e.kind;
    line.dataset.id = e.id;
    var when = document.createElement("span");
    when.className = "when";
    when.textContent = (e.created_at || "").slice(11, 16);
    var who = document.createElement("span");
    who.className = "who";
    who.textContent = e.direction === "in" ? "you" : assistant;
    line.appendChild(when);
    line.appendChild(who);
    if (e.kind !== "message" && e.kind !== "reply") {
      var tag = document.createElement("span");
      tag.className = "tag";
      tag.textContent = e.kind;
      line.appendChild(tag);
    }
    var body = document.createElement("span");
    body.className = "text";
    body.textContent = e.text;  // never innerHTML: what Omega or anyone wrote is text
    line.appendChild(body);
    if (e.media_url) {
      var img = document.createElement("img");
      img.className = "inline-img";
      img.alt = "image";
      img.src = e.media_url;
      line.appendChild(img);
    }
    chat.appendChild(line);
    scroll();
  }

  var source = new EventSource("/chat/events");
  source.addEventListener("chat", function (msg) {
    var e = JSON.parse(msg.data);
    if (e.kind === "typing") { typing.hidden = false; return; }
    if (e.direction === "out") { typing.hidden = true; }
    add(e);
  });
  source.addEventListener("open", function () {
    chat.dataset.connected = "1";
    // The owner is here: ask for the alerts kept while no page was open (a POST with the
    // session's CSRF token; the stream itself, a GET, never delivers them). They arrive on
    // the stream.
    fetch("/chat/alerts", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
      credentials: "same-origin"
    }).catch(function () { /* the next open asks again */ });
  });

  function readImage(file) {
    return new Promise(function (resolve, reject) {
      if (!file) { resolve(null); return; }
      var reader = new FileReader();
      reader.onload = function () { resolve(String(reader.result).split(",")[1]); };
      reader.onerror = reject;
      reader.readAsDataURL(file);
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var value = text.value;
    var file = image.files && image.files[0];
    if (!value.trim() && !file) { return; }
    errorBox.hidden = true;
    readImage(file).then(function (data) {
      return fetch("/chat/send", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ text: value, image: data }),
        credentials: "same-origin"
      });
    }).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok || !body.ok) { throw new Error(body.error || response.statusText); }
        text.value = "";
        image.value = "";
        add(body.event);
      });
    }).catch(function (err) {
      errorBox.textContent = "Not sent: " + err.message;
      errorBox.hidden = false;
    });
  });
  text.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); }
  });
  scroll();
})();
