/* dashboard.js - triage's dashboard: follows the daemon's state over
 * Server-Sent Events and draws it; a job's page; the actions, as POSTs. */
"use strict";

(function () {
	/* How many queued jobs /api/state gives per priority: past this, the
	 * lane says how many more there are. */
	const FIRST_QUEUED = 10;
	/* The running jobs' output tails: bytes before the end. */
	const TAIL_BYTES = 2048;
	/* The job page reads output in chunks of this, up to OUTPUT_MAX shown. */
	const OUTPUT_CHUNK = 65536;
	const OUTPUT_MAX = 1 << 20;
	const WINDOW_S = 300;
	const TERMINAL = ["succeeded", "failed", "timed_out", "canceled", "lost"];
	const RETRYABLE = ["failed", "timed_out", "canceled", "lost"];

	const page = {
		csrf: null,
		last: null,		/* the last state object */
		skew: 0,		/* server clock minus ours, ms */
		es: null,
		retryMs: 1000,
		tails: new Map(),	/* running job id -> a tail fetch under way */
		charts: null,
		job: null,		/* the job page: {id, job, out: {...}} */
		/* Held jobs are out of their queue's order, so /api/state
		 * has none: each lane's first ones are asked for apart, when
		 * its held count moves. priority -> {count, jobs, busy} */
		held: new Map(),
	};

	const $ = (id) => document.getElementById(id);

	/*
	 * A new element: props.class, props.text (its textContent), props.data
	 * (data-* attributes), props.attrs (other attributes); children are
	 * nodes or strings (as text). Job data only ever goes in as text.
	 */
	function h(tag, props, ...children) {
		const e = document.createElement(tag);
		props = props || {};
		if (props.class)
			e.className = props.class;
		if (props.text !== undefined)
			e.textContent = props.text;
		for (const k in props.data || {})
			e.dataset[k] = String(props.data[k]);
		for (const k in props.attrs || {})
			e.setAttribute(k, String(props.attrs[k]));
		for (const c of children)
			if (c !== null && c !== undefined)
				e.append(c);
		return e;
	}

	function setText(e, text) {
		text = String(text);
		if (e.textContent !== text)
			e.textContent = text;
	}

	/*
	 * Makes container's children the items, in order, reusing the child
	 * whose data-key is the item's key (so that a button under the mouse
	 * survives an update): create(item) makes a new one, update(el, item)
	 * brings one up to date.
	 */
	function syncList(container, items, keyOf, create, update) {
		const old = new Map();
		for (const c of Array.from(container.children))
			old.set(c.dataset.key, c);
		let at = container.firstChild;
		for (const item of items) {
			const key = String(keyOf(item));
			let e = old.get(key);
			if (e === undefined) {
				e = create(item);
				e.dataset.key = key;
			}
			old.delete(key);
			update(e, item);
			if (e !== at)
				container.insertBefore(e, at);
			else
				at = at.nextSibling;
		}
		for (const e of old.values())
			e.remove();
	}

	/* ---- formats ---- */

	function parseTime(s) {
		if (typeof s !== "string")
			return null;
		const t = Date.parse(s);
		return Number.isNaN(t) ? null : t;
	}

	function serverNow() {
		return Date.now() + page.skew;
	}

	/* Seconds, as a person reads them: 12 ms, 4.2 s, 3m 05s, 2h 03m. */
	function fmtDuration(s) {
		if (s === null || s === undefined || !Number.isFinite(s))
			return "—";
		if (s < 0)
			s = 0;
		if (s < 1)
			return Math.round(s * 1000) + " ms";
		if (s < 10)
			return s.toFixed(1) + " s";
		if (s < 60)
			return Math.floor(s) + " s";
		const two = (n) => String(n).padStart(2, "0");
		if (s < 3600)
			return Math.floor(s / 60) + "m " + two(Math.floor(s % 60)) + "s";
		if (s < 86400)
			return Math.floor(s / 3600) + "h " + two(Math.floor(s % 3600 / 60)) + "m";
		return Math.floor(s / 86400) + "d " + two(Math.floor(s % 86400 / 3600)) + "h";
	}

	/* A timestamp in local time: the clock today, the date otherwise. */
	function fmtWhen(s) {
		const t = parseTime(s);
		if (t === null)
			return "—";
		const d = new Date(t);
		const today = new Date().toDateString() === d.toDateString();
		return today ? d.toLocaleTimeString() : d.toLocaleString();
	}

	function jobDuration(job) {
		const a = parseTime(job.started_at);
		const b = parseTime(job.finished_at);
		return a === null || b === null ? null : (b - a) / 1000;
	}

	function jobExit(job) {
		if (job.exit_code !== null && job.exit_code !== undefined)
			return String(job.exit_code);
		if (job.signal)
			return job.signal;
		return "—";
	}

	/* Output data as text, whatever its encoding. */
	function outputText(res) {
		if (res.encoding !== "base64")
			return res.data;
		const bin = atob(res.data);
		const bytes = new Uint8Array(bin.length);
		for (let i = 0; i < bin.length; i++)
			bytes[i] = bin.charCodeAt(i);
		return new TextDecoder("utf-8").decode(bytes);
	}

	/* ---- errors and the server ---- */

	function showError(message) {
		setText($("error-text"), message);
		$("error").hidden = false;
	}

	function toLogin() {
		location.assign("login");
	}

	/*
	 * A request to the API: resolves to the JSON body, or rejects with an
	 * Error whose message is the server's one line. A POST carries the
	 * session's CSRF token. A 401 (the session is gone) goes to the login.
	 */
	async function api(method, path) {
		const opts = { method: method, credentials: "same-origin",
		    headers: { "Accept": "application/json" } };
		if (method !== "GET") {
			if (page.csrf === null)
				await loadSession();
			opts.headers["X-Triage-CSRF"] = page.csrf;
		}
		let r;
		try {
			r = await fetch(path, opts);
		} catch (e) {
			throw new Error("cannot reach the daemon: " + e.message);
		}
		let body = null;
		try {
			body = await r.json();
		} catch (e) {
			body = null;
		}
		if (r.status === 401) {
			toLogin();
			throw new Error("not logged in");
		}
		if (!r.ok) {
			const msg = body && body.error && body.error.message ?
			    body.error.message : "HTTP " + r.status;
			const err = new Error(msg);
			err.status = r.status;
			throw err;
		}
		return body;
	}

	async function loadSession() {
		const s = await api("GET", "api/session");
		page.csrf = s.csrf;
		document.body.dataset.auth = s.auth;
	}

	/* ---- actions ---- */

	const ACTION_LABEL = { cancel: "cancel", hold: "hold", release: "release",
	    freeze: "freeze", thaw: "thaw", retry: "retry", pause: "pause",
	    resume: "resume" };

	function actionButton(action, data, title) {
		const b = h("button", { class: action === "cancel" ? "danger" : "",
		    text: ACTION_LABEL[action], data: Object.assign({ action: action }, data),
		    attrs: { type: "button", title: title } });
		return b;
	}

	/* Granted its slots, its process not started yet: still queued, at
	 * position 0 and waiting for nothing. The running section shows it,
	 * so that the slots it holds are seen held. */
	function isStarting(job) {
		return job.state === "queued" && job.position === 0 &&
		    job.pending_reason === null;
	}

	/* The actions that make sense for a job as it is now. */
	function jobActions(job) {
		const list = [];
		if (job.state === "queued" && !isStarting(job)) {
			list.push(job.held ? "release" : "hold");
			list.push("cancel");
		} else if (job.state === "running") {
			list.push(job.frozen ? "thaw" : "freeze");
			list.push("cancel");
		} else if (isStarting(job)) {
			list.push("cancel");
		} else if (RETRYABLE.includes(job.state)) {
			list.push("retry");
		}
		return list;
	}

	/* Fills box with the buttons of job's actions, keeping those that
	 * stay. */
	function syncActions(box, job) {
		syncList(box, jobActions(job), (a) => a,
		    (a) => actionButton(a, { id: job.id }, a + " job " + job.id),
		    () => {});
	}

	async function runAction(button) {
		const action = button.dataset.action;
		let path;
		if (button.dataset.priority !== undefined)
			path = "api/priorities/" +
			    encodeURIComponent(button.dataset.priority) + "/" + action;
		else
			path = "api/jobs/" + Number(button.dataset.id) + "/" + action;
		button.disabled = true;
		try {
			try {
				await api("POST", path);
			} catch (e) {
				/* A new session (the daemon restarted) has a new
				 * token: take it and try once more. */
				if (e.status !== 403)
					throw e;
				await loadSession();
				await api("POST", path);
			}
			if (page.job !== null)
				refreshJob();
		} catch (e) {
			showError(action + " failed: " + e.message);
		} finally {
			button.disabled = false;
		}
	}

	document.addEventListener("click", (ev) => {
		const b = ev.target.closest("button[data-action]");
		if (b !== null && !b.disabled)
			runAction(b);
	});
	$("error-close").addEventListener("click", () => {
		$("error").hidden = true;
	});

	/* ---- the overview ---- */

	function figure(name, label) {
		return h("div", { class: "figure" },
		    h("b", { data: { count: name }, text: "0" }),
		    h("span", { text: label }));
	}

	function queuedItem(job) {
		return h("li", { data: { job: job.id } },
		    h("a", { class: "mono", attrs: { href: "#/job/" + job.id },
		        text: "#" + job.id }),
		    h("span", { class: "name" }),
		    h("span", { class: "badge held", text: "held" }),
		    h("span", { class: "actions" }));
	}

	function updateQueuedItem(li, job) {
		const name = li.querySelector(".name");
		setText(name, job.name);
		name.title = job.argv ? job.argv.map(bytesText).join(" ") : job.name;
		li.querySelector(".held").hidden = !job.held;
		syncActions(li.querySelector(".actions"), job);
	}

	function laneCard(p) {
		return h("div", { class: "card lane", data: { lane: p.name } },
		    h("div", { class: "lane-head" },
		        h("span", { class: "lane-name", text: p.name }),
		        h("span", { class: "badge paused", text: "paused" }),
		        h("span", { class: "actions" })),
		    h("div", { class: "figures" },
		        figure("queued", "queued"), figure("held", "held"),
		        figure("running", "running")),
		    h("div", { class: "bar" }, h("i")),
		    h("div", { class: "cap muted" }),
		    h("ol", { class: "first" }),
		    h("ol", { class: "held-list", attrs: { "aria-label": "held" } }),
		    h("div", { class: "more" }));
	}

	/* starting: how many of p's queued jobs are starting (shown with the
	 * running), neither listed nor "more queued" here. */
	function updateLane(card, p, queued, slots, starting) {
		card.dataset.paused = p.paused ? "yes" : "no";
		card.querySelector(".paused").hidden = !p.paused;
		const act = p.paused ? "resume" : "pause";
		syncList(card.querySelector(".lane-head .actions"), [act], (a) => a,
		    (a) => actionButton(a, { priority: p.name }, a + " " + p.name),
		    () => {});
		for (const k of ["queued", "held", "running"])
			setText(card.querySelector('[data-count="' + k + '"]'),
			    (p[k] || 0).toLocaleString());
		const cap = p.max_running || 0;
		setText(card.querySelector(".cap"), cap > 0 ?
		    "cap " + cap + " slot" + (cap === 1 ? "" : "s") :
		    "no cap (" + slots + " slots)");
		const of = cap > 0 ? cap : slots;
		card.querySelector(".bar > i").style.width =
		    (of > 0 ? Math.min(100, 100 * (p.running || 0) / of) : 0) + "%";
		const jobs = queued || [];
		syncList(card.querySelector("ol.first"), jobs, (j) => j.id,
		    queuedItem, updateQueuedItem);
		const held = heldOf(p);
		syncList(card.querySelector("ol.held-list"), held, (j) => j.id,
		    queuedItem, updateQueuedItem);
		card.querySelector("ol.held-list").hidden = held.length === 0;
		const more = (p.queued || 0) - jobs.length - held.length - starting;
		const moreEl = card.querySelector(".more");
		const texts = [];
		if (more > 0)
			texts.push("and " + more.toLocaleString() + " more queued");
		if (starting > 0)
			texts.push(starting.toLocaleString() + " starting");
		if ((p.queued || 0) === 0)
			texts.push("nothing queued");
		setText(moreEl, texts.join(" · "));
		moreEl.hidden = moreEl.textContent === "";
	}

	/*
	 * The first held jobs of priority p as last fetched; fetches them
	 * again (then draws the lanes anew) when its held count is not the one
	 * they were fetched at.
	 */
	function heldOf(p) {
		let e = page.held.get(p.name);
		if (e === undefined) {
			e = { count: 0, jobs: [], busy: false };
			page.held.set(p.name, e);
		}
		const count = p.held || 0;
		if (count === 0) {
			e.count = 0;
			e.jobs = [];
		} else if (count !== e.count && !e.busy) {
			e.busy = true;
			e.count = count;	/* a failure is not asked again */
			api("GET", "api/jobs?state=queued&held=true&priority=" +
			    encodeURIComponent(p.name) + "&limit=" + FIRST_QUEUED)
			    .then((res) => {
				e.jobs = res.jobs || [];
			    })
			    .catch((err) => showError("held jobs of " + p.name +
				": " + err.message))
			    .finally(() => {
				e.busy = false;
				if (page.last !== null)
					renderLanes(page.last);
			    });
		}
		return e.jobs;
	}

	function renderLanes(s) {
		const prios = (s.stats.priorities || []).slice()
		    .sort((a, b) => a.rank - b.rank);
		syncList($("lanes"), prios, (p) => p.name, laneCard,
		    (card, p) => updateLane(card, p, s.queued[p.name], s.stats.slots,
		        (s.running || []).filter((j) => j.priority === p.name &&
		            isStarting(j)).length));
	}

	/* A cluster's nodes: how many are up, and which are down (stats'
	 * nodes; none without a cluster). */
	function nodesText(nodes) {
		const down = nodes.filter((n) => !n.up).map((n) => n.node);
		return "nodes " + (nodes.length - down.length) + " / " +
		    nodes.length + " up" + (down.length > 0 ?
		    " (down: " + down.join(", ") + ")" : "");
	}

	function renderSummary(st) {
		const parts = [
			"slots " + st.slots_busy + " / " + st.slots + " busy",
			"workers " + st.workers_busy + " / " + st.workers,
			(st.jobs ? st.jobs.queued : 0).toLocaleString() + " queued",
			"up " + fmtDuration(st.uptime),
			"v" + st.version,
		];
		if (Array.isArray(st.nodes))
			parts.splice(2, 0, nodesText(st.nodes));
		syncList($("summary"), parts.map((t, i) => ({ i: i, t: t })),
		    (x) => x.i, () => h("span"), (e, x) => setText(e, x.t));
	}

	function runningCard(job) {
		return h("div", { class: "card job-card", data: { job: job.id } },
		    h("div", { class: "head" },
		        h("a", { class: "mono", attrs: { href: "#/job/" + job.id },
		            text: "#" + job.id }),
		        h("b", { class: "name" }),
		        h("span", { class: "prio muted" }),
		        h("span", { class: "badge frozen", text: "frozen" }),
		        h("span", { class: "elapsed", attrs: { title: "elapsed" } }),
		        h("span", { class: "actions" })),
		    h("pre", { class: "tail", data: { tail: job.id } }));
	}

	function updateRunningCard(card, job) {
		const starting = isStarting(job);
		card.classList.toggle("starting", starting);
		card.dataset.state = starting ? "starting" : job.state;
		/* Its processes stopped where they are: it keeps its slots. */
		card.dataset.frozen = job.frozen ? "yes" : "no";
		card.querySelector(".frozen").hidden = !job.frozen;
		setText(card.querySelector(".name"), job.name);
		card.querySelector(".name").title = job.argv ?
		    job.argv.map(bytesText).join(" ") : "";
		const devices = devicesText(job);
		setText(card.querySelector(".prio"), job.priority +
		    (starting ? " · starting" : "") +
		    (job.pid ? " · pid " + job.pid : "") +
		    (devices !== "" ? " · " + devices : ""));
		const started = parseTime(job.started_at);
		const el = card.querySelector(".elapsed");
		el.dataset.started = started === null ? "" : String(started);
		updateElapsed(el);
		syncActions(card.querySelector(".actions"), job);
	}

	function updateElapsed(el) {
		const t = Number(el.dataset.started);
		setText(el, el.dataset.started === "" ? "" :
		    fmtDuration((serverNow() - t) / 1000));
	}

	function renderRunning(s) {
		const running = s.running || [];
		const box = $("running");
		const had = new Set(Array.from(box.children, (c) => c.dataset.key));
		syncList(box, running, (j) => j.id, runningCard, updateRunningCard);
		$("running-none").hidden = running.length > 0;
		setText($("running-count"), running.length ? running.length : "");
		/* A job that has just started shows its output at once, not at the
		 * next tick; one starting has none yet. */
		for (const j of running)
			if (!had.has(String(j.id)) && !isStarting(j))
				fetchTail(j.id);
	}

	function recentRow(job) {
		return h("tr", { data: { job: job.id } },
		    h("td", { class: "mono" }, h("a", {
		        attrs: { href: "#/job/" + job.id }, text: "#" + job.id })),
		    h("td", { class: "name" }), h("td", { class: "prio" }),
		    h("td", { class: "state" }), h("td", { class: "num exit" }),
		    h("td", { class: "num dur" }), h("td", { class: "when" }),
		    h("td", {}, h("span", { class: "actions" })));
	}

	function updateRecentRow(tr, job) {
		setText(tr.querySelector(".name"), job.name);
		tr.querySelector(".name").title = job.argv ?
		    job.argv.map(bytesText).join(" ") : "";
		setText(tr.querySelector(".prio"), job.priority);
		const st = tr.querySelector(".state");
		setText(st, job.state.replace("_", " "));
		st.className = "state state-" + job.state;
		if (job.reason)
			st.title = job.reason;
		setText(tr.querySelector(".exit"), jobExit(job));
		setText(tr.querySelector(".dur"), fmtDuration(jobDuration(job)));
		setText(tr.querySelector(".when"), fmtWhen(job.finished_at));
		syncActions(tr.querySelector(".actions"), job);
	}

	function renderRecent(s) {
		const recent = s.recent || [];
		syncList($("recent"), recent, (j) => j.id, recentRow, updateRecentRow);
		$("recent-none").hidden = recent.length > 0;
	}

	function renderWaits(s) {
		const waits = (s.series && s.series.wait) || {};
		const prios = (s.stats.priorities || []).slice()
		    .sort((a, b) => a.rank - b.rank);
		syncList($("waits"), prios, (p) => p.name,
		    () => h("tr", {}, h("td"), h("td", { class: "num" }),
		        h("td", { class: "num" }), h("td", { class: "num" })),
		    (tr, p) => {
			const w = waits[p.name] || {};
			const td = tr.children;
			setText(td[0], p.name);
			setText(td[1], fmtDuration(w.p50));
			setText(td[2], fmtDuration(w.p95));
			setText(td[3], w.count || 0);
		    });
	}

	/* ---- resources (protocol v1.2) ---- */

	/* Bytes for people, as triage says a budget: "1 GiB", "11.8 MiB"
	 * (to a tenth, rounded down). */
	function fmtBytes(n) {
		if (typeof n !== "number" || !Number.isFinite(n) || n < 0)
			return "—";
		const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
		let i = 0;
		while (n >= 1024 && i < units.length - 1) {
			n /= 1024;
			i++;
		}
		return String(Math.floor(n * 10) / 10) + " " + units[i];
	}

	/* The units a job was given, for a line: "gpu 0,1 · fpga a". */
	function devicesText(job) {
		const d = job.devices;
		if (d === null || typeof d !== "object")
			return "";
		return Object.keys(d).filter((k) => Array.isArray(d[k]))
		    .map((k) => k + " " + d[k].join(",")).join(" · ");
	}

	/* Who holds each unit of resource name: unit -> the running (and
	 * starting) jobs whose devices name it. */
	function unitHolders(running, name) {
		const by = new Map();
		for (const j of running) {
			const units = j.devices && j.devices[name];
			if (!Array.isArray(units))
				continue;
			for (const u of units) {
				if (!by.has(u))
					by.set(u, []);
				by.get(u).push(j);
			}
		}
		return by;
	}

	function memoryCard() {
		return h("div", { class: "card resource", data: { memory: "yes" } },
		    h("div", { class: "lane-head" },
		        h("span", { class: "lane-name", text: "memory" })),
		    h("div", { class: "figures" },
		        figure("used", "declared by running jobs"),
		        figure("budget", "budget"),
		        figure("available", "available")),
		    h("div", { class: "bar" }, h("i")));
	}

	function updateMemoryCard(card, m) {
		setText(card.querySelector('[data-count="used"]'), fmtBytes(m.used));
		setText(card.querySelector('[data-count="budget"]'),
		    fmtBytes(m.budget));
		/* The kernel's MemAvailable: null where it cannot be read. */
		setText(card.querySelector('[data-count="available"]'),
		    fmtBytes(m.available));
		card.querySelector(".bar > i").style.width = (m.budget > 0 ?
		    Math.min(100, 100 * m.used / m.budget) : 0) + "%";
	}

	function resourceCard(name) {
		return h("div", { class: "card resource", data: { resource: name } },
		    h("div", { class: "lane-head" },
		        h("span", { class: "lane-name", text: name }),
		        h("span", { class: "badge scope", text: "cluster" })),
		    h("div", { class: "figures" },
		        figure("used", "in use"), figure("kept", "kept"),
		        figure("waiting", "jobs waiting")),
		    h("div", { class: "bar" }, h("i")),
		    h("ul", { class: "units", attrs: { "aria-label": name + " units" } }));
	}

	function holderLink(job) {
		return h("a", { class: "mono", data: { job: job.id },
		    attrs: { href: "#/job/" + job.id, title: job.name },
		    text: "#" + job.id });
	}

	/*
	 * r is the resource's object in stats; running, the jobs that may
	 * hold units of it. A unit-named one lists its units, each with the
	 * jobs that hold it; holders stats counts that the page has no job of
	 * (one whose devices could not be recorded) are counted, not named.
	 */
	function updateResourceCard(card, name, r, running) {
		card.querySelector(".scope").hidden = r.scope !== "cluster";
		setText(card.querySelector('[data-count="used"]'), r.used || 0);
		setText(card.querySelector('[data-count="used"] + span'),
		    "of " + (r.units || 0) + " in use");
		setText(card.querySelector('[data-count="kept"]'), r.kept || 0);
		setText(card.querySelector('[data-count="waiting"]'),
		    (r.waiting || 0).toLocaleString());
		card.querySelector(".bar > i").style.width = (r.units > 0 ?
		    Math.min(100, 100 * (r.used || 0) / r.units) : 0) + "%";
		const holders = r.holders !== null && typeof r.holders === "object" ?
		    r.holders : {};
		const ul = card.querySelector("ul.units");
		ul.hidden = r.holders === undefined || r.holders === null;
		const byUnit = unitHolders(running, name);
		const share = r.share || 1;
		syncList(ul, Object.keys(holders), (u) => u,
		    (u) => h("li", { data: { unit: u } },
		        h("span", { class: "unit mono", text: u }),
		        h("span", { class: "holders" }),
		        h("span", { class: "load" })),
		    (li, u) => {
			const ids = byUnit.get(u) || [];
			const n = Number(holders[u]) || 0;
			syncList(li.querySelector(".holders"), ids, (j) => j.id,
			    holderLink, (a, j) => { a.title = j.name; });
			const texts = [];
			if (n === 0 && ids.length === 0)
				texts.push("free");
			else if (n > ids.length)
				texts.push((ids.length > 0 ? "+" : "held by ") +
				    (n - ids.length));
			if (share > 1)
				texts.push(n + "/" + share);
			setText(li.querySelector(".load"), texts.join(" · "));
			li.dataset.free = n === 0 ? "yes" : "no";
		    });
	}

	/* The memory budget, then each resource in the config's order. */
	function renderResources(s) {
		const st = s.stats;
		const items = [];
		if (st.memory)
			items.push({ key: "memory", memory: st.memory });
		for (const name of Object.keys(st.resources || {}))
			items.push({ key: "resource " + name, name: name,
			    r: st.resources[name] });
		syncList($("resources"), items, (x) => x.key,
		    (x) => x.memory ? memoryCard() : resourceCard(x.name),
		    (card, x) => x.memory ? updateMemoryCard(card, x.memory) :
		        updateResourceCard(card, x.name, x.r, s.running || []));
		/* A daemon before protocol v1.2 has none of it. */
		$("resources").closest("section").hidden = items.length === 0;
	}

	/* ---- the charts ---- */

	function makeCharts() {
		const C = window.TriageChart.LineChart;
		page.charts = {
			slots: new C($("chart-slots"), { minMax: 1, series: [
			    { label: "busy" }, { label: "slots" }] }),
			rate: new C($("chart-rate"), { minMax: 1, series: [
			    { label: "jobs/s" }],
			    format: (v) => v >= 10 ? v.toFixed(0) :
			        String(Math.round(v * 10) / 10) }),
		};
	}

	/*
	 * Redraws both charts over the last 5 minutes by our clock (set to the
	 * server's). Past the series' end nothing has changed, or a state would
	 * have come: the slots stay as busy as stats says and nothing starts.
	 */
	function drawCharts() {
		const s = page.last;
		if (s === null || page.charts === null)
			return;
		/* A daemon without the series still has its slots to show. */
		const sr = s.series || { end: 0, slots: s.stats.slots,
		    slots_busy: [], dispatched: [] };
		const step = sr.step || 5;
		const n = sr.slots_busy.length;
		const now = serverNow() / 1000;
		const busy = [], rate = [];
		for (let i = 0; i < n; i++) {
			const t = sr.end - (n - i - 0.5) * step;
			busy.push({ t: t, v: sr.slots_busy[i] });
			rate.push({ t: t, v: (sr.dispatched[i] || 0) / step });
		}
		for (let t = sr.end + step / 2; n > 0 && t < now; t += step) {
			busy.push({ t: t, v: s.stats.slots_busy });
			rate.push({ t: t, v: 0 });
		}
		const from = now - WINDOW_S;
		page.charts.slots.update({ from: from, to: now, series: [busy,
		    [{ t: from, v: sr.slots }, { t: now, v: sr.slots }]] });
		page.charts.rate.update({ from: from, to: now, series: [rate] });
	}

	/* ---- output tails ---- */

	/* Fetches the running job's last bytes of stdout into its card, unless a
	 * fetch of it is under way already. */
	function fetchTail(id) {
		if (page.tails.has(id))
			return;
		const p = api("GET", "api/jobs/" + id + "/output?stream=stdout&offset=-" +
		    TAIL_BYTES)
		    .then((res) => {
			const pre = document.querySelector('pre[data-tail="' + id + '"]');
			if (pre === null)
				return;
			const atEnd = pre.scrollTop + pre.clientHeight >=
			    pre.scrollHeight - 4;
			setText(pre, outputText(res));
			if (atEnd)
				pre.scrollTop = pre.scrollHeight;
		    })
		    .catch(() => {})	/* the job ended meanwhile: the next state
					 * takes its card away */
		    .finally(() => page.tails.delete(id));
		page.tails.set(id, p);
	}

	function refreshTails() {
		if (page.last === null || document.hidden)
			return;
		for (const j of page.last.running || [])
			if (!isStarting(j))
				fetchTail(j.id);
		if (page.job !== null && page.job.job &&
		    !TERMINAL.includes(page.job.job.state))
			refreshJob();
	}

	/* A byte string of a job (an element of argv, its cwd): a string, or
	 * {"base64": ...} for bytes that are not UTF-8, shown with \xNN for
	 * each byte that is not printable ASCII. */
	function bytesText(v) {
		if (typeof v === "string")
			return v;
		if (v === null || typeof v !== "object" ||
		    typeof v.base64 !== "string")
			return String(v);
		let s = "";
		for (const c of atob(v.base64)) {
			const b = c.charCodeAt(0);
			s += b >= 0x20 && b < 0x7f ? c :
			    "\\x" + b.toString(16).padStart(2, "0");
		}
		return s;
	}

	/* ---- the job page ---- */

	const FIELD_ORDER = ["id", "name", "state", "frozen", "reason",
	    "priority", "argv", "cwd", "uid", "gid", "labels", "held",
	    "pending_reason", "position", "submitted_at", "begin_at",
	    "started_at", "finished_at", "pid", "exit_code", "signal", "attempt",
	    "timeout", "slots", "exclusive", "memory", "resources", "devices",
	    "nice", "merge_output", "after", "after_any", "user_time",
	    "system_time", "max_rss_kb", "peak_memory", "oom", "cgroup"];

	function fieldText(k, v) {
		if (v === null || v === undefined)
			return "—";
		if (k.endsWith("_at"))
			return v + "  (" + fmtWhen(v) + ")";
		if (k === "argv" && Array.isArray(v))
			return v.map(bytesText).map((a) =>
			    /^[A-Za-z0-9_./=:@%+-]+$/.test(a) ? a :
			    "'" + a.replace(/'/g, "'\\''") + "'").join(" ");
		if (k === "cwd")
			return bytesText(v);
		if (typeof v === "object")
			return JSON.stringify(v);
		return String(v);
	}

	function renderJob(job) {
		setText($("job-title"), "Job #" + job.id + " · " + job.name);
		const keys = FIELD_ORDER.filter((k) => k in job)
		    .concat(Object.keys(job).filter((k) => !FIELD_ORDER.includes(k)));
		syncList($("job-fields"), keys, (k) => k,
		    (k) => {
			return h("div", { class: "field" }, h("dt", { text: k }),
			    h("dd", { data: { field: k } }));
		    },
		    (d, k) => {
			const dd = d.querySelector("dd");
			setText(dd, fieldText(k, job[k]) +
			    (k === "state" && job.frozen ? " (frozen)" : ""));
			dd.className = k === "state" ? "state-" + job.state +
			    (job.frozen ? " state-frozen" : "") : "";
		    });
		syncActions($("job-actions"), job);
	}

	function newOut() {
		return { offset: 0, busy: false, shown: 0 };
	}

	/* Reads the stream's next chunk into the job page. */
	async function loadOutput(stream) {
		const view = page.job;
		const o = view.out[stream];
		if (o.busy || o.shown >= OUTPUT_MAX)
			return;
		o.busy = true;
		try {
			const res = await api("GET", "api/jobs/" + view.id +
			    "/output?stream=" + stream + "&offset=" + o.offset +
			    "&limit=" + OUTPUT_CHUNK);
			if (page.job !== view)
				return;
			const pre = $("job-" + stream);
			if (res.attempt !== undefined && o.attempt !== undefined &&
			    res.attempt !== o.attempt) {
				/* A retry: its output starts afresh. */
				pre.textContent = "";
				o.shown = 0;
			}
			o.attempt = res.attempt;
			const text = outputText(res);
			if (text.length > 0)
				pre.append(text);
			o.shown += res.next_offset - res.offset;
			o.offset = res.next_offset;
			const notes = [];
			if (res.dropped > 0)
				notes.push(res.dropped.toLocaleString() + " bytes dropped before");
			if (res.truncated)
				notes.push("truncated");
			if (o.shown >= OUTPUT_MAX)
				notes.push("first " + OUTPUT_MAX / 1024 + " KiB shown");
			setText($("job-" + stream + "-note"), notes.join(", "));
			$("job-" + stream + "-more").hidden = o.shown >= OUTPUT_MAX ||
			    res.next_offset - res.offset < OUTPUT_CHUNK;
		} catch (e) {
			if (page.job === view)
				setText($("job-" + stream + "-note"), e.message);
		} finally {
			o.busy = false;
		}
	}

	async function refreshJob() {
		const view = page.job;
		if (view === null)
			return;
		try {
			const job = await api("GET", "api/jobs/" + view.id);
			if (page.job !== view)
				return;
			if (view.job && view.job.attempt !== job.attempt)
				for (const s of ["stdout", "stderr"]) {
					view.out[s] = newOut();
					$("job-" + s).textContent = "";
				}
			view.job = job;
			renderJob(job);
			loadOutput("stdout");
			loadOutput("stderr");
		} catch (e) {
			if (page.job === view)
				showError("job " + view.id + ": " + e.message);
		}
	}

	for (const s of ["stdout", "stderr"])
		$("job-" + s + "-more").addEventListener("click", () => loadOutput(s));

	/* The hash is the route: #/job/ID is a job's page, anything else the
	 * overview. */
	function route() {
		const m = /^#\/job\/(\d+)$/.exec(location.hash);
		$("overview").hidden = m !== null;
		$("jobview").hidden = m === null;
		if (m === null) {
			page.job = null;
			document.title = "triage";
			drawCharts();
			return;
		}
		page.job = { id: Number(m[1]), job: null,
		    out: { stdout: newOut(), stderr: newOut() } };
		document.title = "triage: job " + m[1];
		$("job-title").textContent = "Job #" + m[1];
		$("job-fields").textContent = "";
		$("job-actions").textContent = "";
		for (const s of ["stdout", "stderr"]) {
			$("job-" + s).textContent = "";
			$("job-" + s + "-note").textContent = "";
			$("job-" + s + "-more").hidden = true;
		}
		refreshJob();
	}
	window.addEventListener("hashchange", route);

	/* ---- live ---- */

	function setLive(state, text) {
		document.body.dataset.live = state;
		setText($("live"), text);
	}

	function render(s) {
		const now = parseTime(s.now);
		if (now !== null)
			page.skew = now - Date.now();
		page.last = s;
		renderSummary(s.stats);
		renderLanes(s);
		renderResources(s);
		renderWaits(s);
		renderRunning(s);
		renderRecent(s);
		drawCharts();
		if (page.job !== null)
			refreshJob();
		document.body.dataset.states = String(
		    Number(document.body.dataset.states || 0) + 1);
	}

	/*
	 * Follows /api/events. The browser reconnects by itself after a network
	 * error; a refusal (401, 503) closes the stream for good, so then we
	 * ask whether the session still holds, and open a new one later.
	 */
	function connect() {
		const es = new EventSource("api/events");
		page.es = es;
		es.addEventListener("open", () => {
			page.retryMs = 1000;
			setLive("yes", "live");
		});
		es.addEventListener("state", (ev) => {
			let s;
			try {
				s = JSON.parse(ev.data);
			} catch (e) {
				showError("the daemon sent a state that is not JSON");
				return;
			}
			setLive("yes", "live");
			render(s);
		});
		es.addEventListener("tick", refreshTails);
		es.addEventListener("error", () => {
			if (es.readyState !== EventSource.CLOSED) {
				setLive("no", "reconnecting…");
				return;
			}
			es.close();
			setLive("no", "disconnected, retrying…");
			setTimeout(() => {
				loadSession().then(connect, () => {
					page.retryMs = Math.min(page.retryMs * 2, 30000);
					setTimeout(connect, page.retryMs);
				});
			}, page.retryMs);
			page.retryMs = Math.min(page.retryMs * 2, 30000);
		});
	}

	/* A second's timer, which asks the server nothing: elapsed times, and
	 * the charts' window sliding on while nothing changes. */
	let ticks = 0;
	setInterval(() => {
		if (document.hidden)
			return;
		for (const el of document.querySelectorAll(".elapsed[data-started]"))
			updateElapsed(el);
		if (++ticks % 5 === 0 && !$("overview").hidden)
			drawCharts();
	}, 1000);

	makeCharts();
	route();
	loadSession().catch((e) => showError("session: " + e.message));
	connect();
})();
