package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/retryafter"
)

// sender delivers one webhook's alerts in order, retrying each with
// backoff, from a bounded queue of its own: a dead receiver holds up only
// its own alerts.
type sender struct {
	n      *Notifier
	target config.Alert
	client *http.Client // target's: no redirects, its address rules
	log    *slog.Logger
	queue  chan Message
}

// targetKey tells webhooks apart: the same URL with other headers or
// another format is another webhook.
func targetKey(a config.Alert) string {
	names := make([]string, 0, len(a.Headers))
	for k := range a.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(a.AlertFormat() + "\x00" + a.URL)
	for _, k := range names {
		b.WriteString("\x00" + k + "\x00" + a.Headers[k])
	}
	return b.String()
}

// post queues m for every configured webhook; it never blocks.
func (n *Notifier) post(cfg *config.Config, m Message) {
	for _, a := range cfg.Alerts {
		s := n.sender(a)
		select {
		case s.queue <- m:
		default:
			s.log.Warn("alerts: the webhook's queue is full; alert dropped", "event", m.Event,
				"subscription", m.Subscription, "account", m.Account)
			n.observe(m.Event, ResultDropped)
			m.delivery.done(false)
		}
	}
}

func (n *Notifier) sender(a config.Alert) *sender {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := targetKey(a)
	if s, ok := n.senders[key]; ok {
		return s
	}
	s := &sender{n: n, target: a, client: webhookClient(n.o, a), queue: make(chan Message, n.o.QueueSize),
		log: n.log.With("webhook", config.RedactURL(a.URL), "format", a.AlertFormat())}
	n.senders[key] = s
	n.sending.Add(1)
	go s.run()
	return s
}

func (n *Notifier) observe(ev Event, result string) {
	if n.o.Observer != nil {
		n.o.Observer.AlertSent(string(ev), result)
	}
}

func (s *sender) run() {
	defer s.n.sending.Done()
	for m := range s.queue {
		s.deliver(m)
	}
}

// deliver sends one alert, retrying what may succeed later (no answer,
// 408, 429, 5xx) with doubling waits, and gives up with a log line.
func (s *sender) deliver(m Message) {
	o := s.n.o
	attrs := []any{"event", m.Event, "subscription", m.Subscription, "account", m.Account}
	wait := o.RetryBase
	for attempt := 1; ; attempt++ {
		if s.n.ctx.Err() != nil {
			s.log.Warn("alerts: shutting down; alert not delivered", attrs...)
			s.n.observe(m.Event, ResultDropped)
			m.delivery.done(false)
			return
		}
		retryAfter, err := s.send(m)
		if err == nil {
			s.log.Info("alert sent", append(attrs, "attempts", attempt)...)
			s.n.observe(m.Event, ResultSent)
			m.delivery.done(true)
			return
		}
		var perm *permanentError
		if errors.As(err, &perm) || attempt >= o.MaxAttempts {
			s.log.Warn("alerts: alert not delivered; giving up", append(attrs, "attempts", attempt, "error", err.Error())...)
			s.n.observe(m.Event, ResultFailed)
			m.delivery.done(false)
			return
		}
		pause := min(max(wait, retryAfter), o.RetryCap)
		s.log.Debug("alerts: delivery failed; retrying", append(attrs, "attempt", attempt, "retry_in", pause.String(), "error", err.Error())...)
		select {
		case <-time.After(pause):
		case <-s.n.ctx.Done():
		}
		wait = min(wait*2, o.RetryCap)
	}
}

// permanentError is an answer that the same request would get again: a
// refusal (status), or err.
type permanentError struct {
	status string
	err    error
}

func (e *permanentError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return "the webhook refused the alert (" + e.status + "); check its URL, headers and format"
}

func (e *permanentError) Unwrap() error { return e.err }

// send posts m once. It returns the receiver's Retry-After, if any.
func (s *sender) send(m Message) (time.Duration, error) {
	body, contentType, headers, err := encode(s.target.AlertFormat(), m)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(s.n.ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.target.URL, bytes.NewReader(body))
	if err != nil {
		// Never quote the URL: it often carries a token.
		return 0, &permanentError{status: "its URL cannot be used"}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "calsyncd-alerts")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	for k, v := range s.target.Headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // drop the URL
		}
		var refused *AddressRefusedError
		if errors.As(err, &refused) {
			return 0, &permanentError{err: refused}
		}
		return 0, fmt.Errorf("cannot reach the webhook: %s", newScrubber(s.n.o.Config()).scrub(err.Error()))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return 0, nil
	case code >= 300 && code < 400:
		return 0, &permanentError{err: &RedirectError{Code: code}}
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return retryafter.Parse(resp.Header.Get("Retry-After"), resp.Header.Get("Date"), s.n.o.Now()),
			fmt.Errorf("the webhook answered %d %s", code, http.StatusText(code))
	}
	return 0, &permanentError{status: fmt.Sprintf("%d %s", code, http.StatusText(code))}
}

// encode renders an alert in a webhook format.
func encode(format string, m Message) (body []byte, contentType string, headers map[string]string, err error) {
	switch format {
	case config.AlertSlack:
		body, err = json.Marshal(map[string]string{"text": m.Title + "\n" + m.Message})
		return body, "application/json", nil, err
	case config.AlertNtfy:
		headers = map[string]string{"Title": m.Title, "Tags": ntfyTag(m.Event)}
		if m.Event == ErrorEntered || m.Event == AuthFailed {
			headers["Priority"] = "high"
		}
		return []byte(m.Message), "text/plain; charset=utf-8", headers, nil
	}
	body, err = json.Marshal(m)
	return body, "application/json", nil, err
}

// ntfyTag is the emoji ntfy shows before the title.
func ntfyTag(ev Event) string {
	switch ev {
	case ErrorCleared, DeletesReleased:
		return "white_check_mark"
	case UsageLimited, FeedThrottled:
		return "hourglass"
	}
	return "warning"
}
