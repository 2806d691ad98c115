// Parses the benchmark feeds with ical.js (the parser GAS-ICS-Sync runs on)
// doing the work internal/feed does: parse, register the feed's VTIMEZONEs,
// read every event's fields, resolve start, end and EXDATEs to instants, and
// hash what Google would show. Prints events/s per file.
//
// Two ways: "component" reads properties straight off the components (the
// fastest use of ical.js); "gas" does what GAS-ICS-Sync's createEvent does
// per event (new ICAL.Event, an MD5 of its text, its start, end and fields).
//
//   go run ./bench/icaljs/genfeeds -o /tmp/feeds
//   node bench/icaljs/bench.js [--gas] /tmp/feeds/bench-10000.ics /tmp/feeds/bench-100000.ics
import ICAL from 'ical.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

function parseOnce(text) {
  const cal = new ICAL.Component(ICAL.parse(text));
  for (const vtz of cal.getAllSubcomponents('vtimezone')) {
    ICAL.TimezoneService.register(vtz);
  }
  const out = [];
  // ICAL.Event is not used: its constructor costs milliseconds per event on
  // a large feed, and the component API does the same work far faster.
  for (const vevent of cal.getAllSubcomponents('vevent')) {
    const start = vevent.getFirstPropertyValue('dtstart');
    let end = vevent.getFirstPropertyValue('dtend');
    if (!end) {
      const dur = vevent.getFirstPropertyValue('duration');
      end = start.clone();
      if (dur) end.addDuration(dur);
      else if (start.isDate) end.day += 1;
    }
    const rec = vevent.getAllProperties('rrule').map((p) => p.getFirstValue().toString())
      .concat(vevent.getAllProperties('exdate').flatMap((p) => p.getValues().map((v) => v.toUnixTime().toString())));
    const h = createHash('sha256');
    for (const s of [vevent.getFirstPropertyValue('summary') || '', vevent.getFirstPropertyValue('description') || '',
      vevent.getFirstPropertyValue('location') || '', vevent.getFirstPropertyValue('url') || '',
      start.isDate ? start.toString() : String(start.toUnixTime()), end.isDate ? end.toString() : String(end.toUnixTime()),
      vevent.getFirstPropertyValue('status') || '', vevent.getFirstPropertyValue('transp') || '',
      vevent.getFirstPropertyValue('class') || '', ...rec]) {
      h.update(String(s.length)); h.update(':'); h.update(s);
    }
    const rid = vevent.getFirstPropertyValue('recurrence-id');
    out.push({ uid: vevent.getFirstPropertyValue('uid'), rid: rid ? rid.toString() : '', hash: h.digest('hex').slice(0, 32) });
  }
  return out;
}

// parseLikeGAS follows GAS-ICS-Sync (Helpers.gs: parseResponses and
// createEvent) for every event of the feed.
function parseLikeGAS(text) {
  const cal = new ICAL.Component(ICAL.parse(text));
  ICAL.helpers.updateTimezones(cal);
  for (const vtz of cal.getAllSubcomponents('vtimezone')) {
    ICAL.TimezoneService.register(vtz);
  }
  const out = [];
  for (const vevent of cal.getAllSubcomponents('vevent')) {
    vevent.removeProperty('dtstamp');
    const ev = new ICAL.Event(vevent);
    const digest = createHash('md5').update(ev.toString()).digest('hex');
    const start = ev.startDate.toString();
    const end = ev.endDate.toString();
    out.push({ uid: ev.uid, digest, start, end, summary: ev.summary, description: ev.description,
      location: ev.location, recurring: ev.isRecurring() });
  }
  return out;
}

const args = process.argv.slice(2);
const gas = args[0] === '--gas';
const parse = gas ? parseLikeGAS : parseOnce;
for (const file of gas ? args.slice(1) : args) {
  const text = readFileSync(file, 'utf8');
  parse(text); // warm up the JIT
  // At least 3 runs and 2 s, so that a small feed is timed with a hot JIT.
  let runs = 0;
  let events = 0;
  const t0 = process.hrtime.bigint();
  let secs = 0;
  while (runs < 3 || secs < 2) {
    events += parse(text).length;
    runs++;
    secs = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  global.gc && global.gc();
  const before = process.memoryUsage().heapUsed;
  const kept = parse(text);
  global.gc && global.gc();
  const retained = process.memoryUsage().heapUsed - before;
  console.log(`${gas ? 'gas' : 'component'} ${file}: ${Math.round(events / secs)} events/s over ${runs} runs, ${kept.length} events, ` +
    `${Math.round(retained / kept.length)} retained B/event (results only)`);
}
