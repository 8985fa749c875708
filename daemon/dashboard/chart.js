/* chart.js - a small live line chart in SVG for triage's dashboard: a few
 * series of (time, value) points over a sliding window, redrawn whole. */
"use strict";

(function () {
	const NS = "http://www.w3.org/2000/svg";
	const PAD = { left: 34, right: 8, top: 16, bottom: 18 };

	function el(name, attrs, parent) {
		const e = document.createElementNS(NS, name);
		for (const k in attrs)
			e.setAttribute(k, attrs[k]);
		if (parent)
			parent.appendChild(e);
		return e;
	}

	/* The smallest 1, 2 or 5 times a power of ten at or above v, so that
	 * the top grid line has a round label. */
	function niceMax(v) {
		if (!(v > 0))
			return 1;
		const p = Math.pow(10, Math.floor(Math.log10(v)));
		for (const m of [1, 2, 5, 10])
			if (m * p >= v - 1e-9)
				return m * p;
		return 10 * p;
	}

	function defaultFormat(v) {
		if (v === 0)
			return "0";
		if (Math.abs(v) >= 100)
			return v.toFixed(0);
		return String(Math.round(v * 100) / 100);
	}

	/*
	 * A chart in container (emptied). opts.series: [{label}], drawn in
	 * order with classes s0, s1...; opts.format: the y labels' text;
	 * opts.minMax: the least top of the y axis. Nothing is drawn until
	 * update().
	 */
	function LineChart(container, opts) {
		this.container = container;
		this.opts = opts;
		this.last = null;
		container.textContent = "";
		this.svg = el("svg", { role: "img" }, container);
		const label = opts.series.map((s) => s.label).join(", ");
		this.svg.setAttribute("aria-label", label);
		window.addEventListener("resize", () => {
			if (this.last)
				this.update(this.last);
		});
	}

	/*
	 * Redraws from data: {from, to} (the window's ends, seconds), and
	 * series: one array per opts.series of {t, v} points in time order
	 * (points outside the window are clipped).
	 */
	LineChart.prototype.update = function (data) {
		this.last = data;
		const svg = this.svg;
		const w = Math.max(this.container.clientWidth, 120);
		const h = Math.max(this.container.clientHeight, 80);
		const fmt = this.opts.format || defaultFormat;
		svg.setAttribute("viewBox", "0 0 " + w + " " + h);
		while (svg.firstChild)
			svg.removeChild(svg.firstChild);

		let top = this.opts.minMax || 0;
		for (const s of data.series)
			for (const p of s)
				if (p.v > top)
					top = p.v;
		top = niceMax(top);

		const x0 = PAD.left, x1 = w - PAD.right;
		const y0 = h - PAD.bottom, y1 = PAD.top;
		const span = data.to - data.from;
		const xOf = (t) => x0 + (x1 - x0) * (t - data.from) / span;
		const yOf = (v) => y0 - (y0 - y1) * v / top;

		for (const f of [0, 0.5, 1]) {
			const y = yOf(top * f);
			el("line", { class: "grid", x1: x0, x2: x1, y1: y, y2: y }, svg);
			const t = el("text", { class: "axis", x: x0 - 5, y: y + 3,
			    "text-anchor": "end" }, svg);
			t.textContent = fmt(top * f);
		}
		for (const [frac, text] of [[0, "-5 min"], [0.5, "-2.5 min"], [1, "now"]]) {
			const t = el("text", { class: "axis", x: x0 + (x1 - x0) * frac,
			    y: h - 4, "text-anchor": frac === 0 ? "start" :
			    frac === 1 ? "end" : "middle" }, svg);
			t.textContent = text;
		}

		data.series.forEach((points, i) => {
			const g = el("g", { class: "s" + i }, svg);
			const inside = points.filter((p) => p.t >= data.from &&
			    p.t <= data.to && Number.isFinite(p.v));
			if (inside.length === 0)
				return;
			const xy = inside.map((p) => xOf(p.t).toFixed(1) + "," +
			    yOf(p.v).toFixed(1));
			el("path", { class: "area", d: "M" + xOf(inside[0].t).toFixed(1) +
			    "," + y0 + " L" + xy.join(" L") + " L" +
			    xOf(inside[inside.length - 1].t).toFixed(1) + "," + y0 + " Z" },
			    g);
			el("path", { class: "line", d: "M" + xy.join(" L") }, g);
		});

		let lx = x1;
		for (let i = this.opts.series.length - 1; i >= 0; i--) {
			const t = el("text", { class: "legend", x: lx, y: 10,
			    "text-anchor": "end" }, svg);
			t.textContent = this.opts.series[i].label;
			const g = el("g", { class: "s" + i }, svg);
			const tw = t.getComputedTextLength ? t.getComputedTextLength() : 60;
			el("line", { class: "line", x1: lx - tw - 20, x2: lx - tw - 6,
			    y1: 6, y2: 6 }, g);
			lx -= tw + 30;
		}
	};

	window.TriageChart = { LineChart: LineChart };
})();
