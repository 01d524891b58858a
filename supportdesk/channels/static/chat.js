// The chat page: one conversation with the desk over the JSON API and an EventSource.
// Everything the desk or the customer wrote is inserted with textContent, never as HTML.
"use strict";

(() => {
  const STORE_KEY = "supportdesk.conversation";
  const log = document.getElementById("log");
  const notice = document.getElementById("notice");
  const problem = document.getElementById("problem");
  const talkingTo = document.getElementById("talking-to");
  const form = document.getElementById("composer");
  const input = document.getElementById("text");
  const sendButton = document.getElementById("send");

  let conversation = load();
  let stream = null;
  let streaming = null; // the reply being written: {agent, element}
  const shown = new Set(); // seqs on the page, so a resumed stream never repeats one
  let leaving = false; // the page is unloading (reload, navigation, tab closed)
  let retry = null; // the timer of the next reconnection, while the desk cannot be reached
  let retryDelay = 1000;

  // The conversation is kept in localStorage: a reload, a lost connection and a closed tab
  // reopened all come back to it (sessionStorage, where earlier pages kept it, is still read).
  function load() {
    for (const storage of [localStorage, sessionStorage]) {
      try {
        const saved = JSON.parse(storage.getItem(STORE_KEY) || "null");
        if (saved && saved.id && saved.token) return saved;
      } catch (_) {
        // unreadable: try the other one
      }
    }
    return null;
  }

  function save(value) {
    for (const storage of [localStorage, sessionStorage]) {
      try {
        if (value) storage.setItem(STORE_KEY, JSON.stringify(value));
        else storage.removeItem(STORE_KEY);
      } catch (_) {
        // storage full or off: the conversation lasts as long as the page
      }
    }
  }

  function forget() {
    save(null);
    if (stream) stream.close();
    stream = null;
    conversation = null;
  }

  // An unloading page closes its stream, which fires "error": that is no reason to forget.
  window.addEventListener("pagehide", () => { leaving = true; });
  window.addEventListener("beforeunload", () => { leaving = true; });
  window.addEventListener("pageshow", (shownAgain) => {
    leaving = false;
    if (shownAgain.persisted && conversation) listen(); // back from the page cache
  });

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function scrollDown() {
    log.scrollTop = log.scrollHeight;
    window.scrollTo(0, document.body.scrollHeight);
  }

  function showProblem(text) {
    problem.textContent = text;
    problem.hidden = !text;
  }

  function bubble(from, who, text) {
    const item = element("li", `msg ${from}`);
    if (who) item.appendChild(element("span", "who", who));
    item.appendChild(element("span", "text", text));
    log.appendChild(item);
    return item;
  }

  function onMessage(event) {
    if (event.from === "agent" && streaming) {
      streaming.element.remove();
      streaming = null;
    }
    const who = event.from === "agent" ? event.agent : event.from === "staff" ? event.name : "You";
    const item = bubble(event.from, who, event.text);
    item.dataset.seq = String(event.seq);
  }

  function onDelta(event) {
    if (!streaming || streaming.agent !== event.agent) {
      if (streaming) streaming.element.remove();
      const item = bubble("agent streaming", event.agent, "");
      streaming = { agent: event.agent, element: item, text: item.querySelector(".text") };
    }
    streaming.text.textContent += event.text;
  }

  function onHandoff(event) {
    talkingTo.textContent = `You are talking to ${event.agent}`;
    log.appendChild(element("li", "event handoff", event.text));
  }

  function onStatus(event) {
    if (event.status === "checking") {
      notice.textContent = event.text;
      notice.hidden = false;
    } else {
      notice.hidden = true;
      log.appendChild(element("li", `event status-${event.status}`, event.text));
    }
  }

  // An offer (issue 33): the agent's question arrived as a message; these buttons answer it
  // with a structured answer naming the offer, so a yes confirms exactly what was offered.
  const offers = new Map(); // offer id -> its buttons' row
  function onOffer(event) {
    const row = element("li", "event offer");
    row.dataset.offer = event.offer_id;
    const yes = element("button", "offer-yes", event.yes);
    const no = element("button", "offer-no", event.no);
    yes.type = no.type = "button";
    yes.addEventListener("click", () => answerOffer(event.offer_id, true, event.yes, row));
    no.addEventListener("click", () => answerOffer(event.offer_id, false, event.no, row));
    row.append(yes, no);
    log.appendChild(row);
    offers.set(event.offer_id, row);
  }

  function onAnswer(event) {
    // The offer is closed (answered, expired or withdrawn): its buttons go.
    const row = offers.get(event.offer_id);
    if (row) row.remove();
    offers.delete(event.offer_id);
  }

  async function answerOffer(offerId, yes, label, row) {
    for (const button of row.querySelectorAll("button")) button.disabled = true;
    try {
      await api(`/api/conversations/${encodeURIComponent(conversation.id)}/messages`, {
        text: label,
        answer: { offer_id: offerId, yes },
      });
      showProblem("");
    } catch (failure) {
      for (const button of row.querySelectorAll("button")) button.disabled = false;
      showProblem(`Not sent: ${failure.message}`);
    }
  }

  const handlers = { message: onMessage, delta: onDelta, handoff: onHandoff, status: onStatus, offer: onOffer, answer: onAnswer };

  function listen() {
    if (stream) stream.close();
    // From the last event shown: a stream opened again (a reconnection) sends only what is new.
    const after = shown.size ? Math.max(...shown) : 0;
    const url = `/api/conversations/${encodeURIComponent(conversation.id)}/events?token=${encodeURIComponent(conversation.token)}&last_event_id=${after}`;
    stream = new EventSource(url);
    for (const [type, handle] of Object.entries(handlers)) {
      stream.addEventListener(type, (message) => {
        let event;
        try {
          event = JSON.parse(message.data);
        } catch (_) {
          return;
        }
        if (event.seq !== undefined) {
          if (shown.has(event.seq)) return;
          shown.add(event.seq);
        }
        handle(event);
        scrollDown();
      });
    }
    stream.addEventListener("open", () => {
      retryDelay = 1000;
      showProblem("");
    });
    const mine = stream;
    stream.addEventListener("error", () => {
      // EventSource retries by itself while the server is unreachable, and gives up on any
      // answer that is not a stream (a refused conversation, but also a proxy's 502 or a desk
      // restarting). Only the desk saying the conversation is gone or not this token's forgets
      // it; anything else reconnects (from the last event shown: `shown` skips repeats).
      if (leaving || mine !== stream || mine.readyState !== EventSource.CLOSED) return;
      checkGone(url);
    });
  }

  async function checkGone(url) {
    const asked = conversation;
    let status = 0;
    const abort = new AbortController();
    try {
      const response = await fetch(url, { signal: abort.signal, headers: { Accept: "text/event-stream" } });
      status = response.status;
    } catch (_) {
      status = 0; // unreachable
    } finally {
      abort.abort(); // only the status was wanted, not the stream
    }
    if (leaving || conversation !== asked || !conversation) return;
    if (status === 404 || status === 403 || status === 401 || status === 410) {
      forget();
      showProblem("This conversation is no longer available. Send a message to start a new one.");
      return;
    }
    showProblem("Reconnecting to the desk…");
    clearTimeout(retry);
    retry = setTimeout(() => { if (conversation === asked) listen(); }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 15000);
  }

  async function api(path, body) {
    const headers = { "Content-Type": "application/json" };
    if (conversation) headers.Authorization = `Bearer ${conversation.token}`;
    const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    let answer = {};
    try {
      answer = await response.json();
    } catch (_) {
      answer = {};
    }
    if (!response.ok) {
      const wait = response.headers.get("Retry-After");
      const why = answer.error || `the desk answered ${response.status}`;
      throw new Error(wait ? `${why}` : why);
    }
    return answer;
  }

  async function start() {
    const created = await api("/api/conversations", {});
    conversation = { id: created.conversation_id, token: created.token };
    save(conversation);
    listen();
  }

  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    sendButton.disabled = true;
    try {
      if (!conversation) await start();
      await api(`/api/conversations/${encodeURIComponent(conversation.id)}/messages`, { text });
      input.value = "";
      showProblem("");
    } catch (failure) {
      showProblem(`Not sent: ${failure.message}`);
    } finally {
      sendButton.disabled = false;
      input.focus();
    }
  });

  input.addEventListener("keydown", (key) => {
    if (key.key === "Enter" && !key.shiftKey) {
      key.preventDefault();
      form.requestSubmit();
    }
  });

  document.getElementById("restart").addEventListener("click", () => {
    forget();
    clearTimeout(retry);
    shown.clear();
    offers.clear();
    log.replaceChildren();
    notice.hidden = true;
    talkingTo.textContent = "";
    showProblem("");
    input.focus();
  });

  if (conversation) listen();
  input.focus();
})();
