package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// HandOffError is a daemon's refusal of a hand-off: its HTTP status and
// what it said, and, when it does not hold the subscription's account, the
// process that does.
type HandOffError struct {
	Status  string
	Code    int
	Message string
	Account string
	Holder  string
}

func (e *HandOffError) Error() string { return fmt.Sprintf("it answered %s: %s", e.Status, e.Message) }

// LeaseHeld reports whether the daemon refused because another process
// holds the account.
func (e *HandOffError) LeaseHeld() bool { return e.Code == http.StatusConflict && e.Account != "" }

// HandOff asks the daemon's status endpoint at listen (the configured
// listen address) to run a subscription now with the operator's options,
// as POST /subscriptions/{id}/sync does, and returns the new run's id. It
// is how `calsyncd sync` passes on a subscription whose account a running
// daemon holds. Every option opts encodes travels; a daemon that does not
// know one refuses the sync (a *HandOffError) rather than run without it.
//
// It authenticates with status.token, or without one with the running
// daemon's hand-off key from the state directory (which only those who
// may write the state can read): a daemon without a token takes options
// from nobody else.
func HandOff(ctx context.Context, cfg *config.Config, id string, opts subscription.Options) (int64, error) {
	token := cfg.Status.Token
	if token == "" {
		token = readHandOffKey(cfg.StateDir)
	}
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return 0, err
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	body, err := json.Marshal(opts)
	if err != nil {
		return 0, fmt.Errorf("the sync's options cannot be sent: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+net.JoinHostPort(host, port)+"/subscriptions/"+url.PathEscape(id)+"/sync", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach it: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	var answer struct {
		RunID   int64  `json:"run_id"`
		Error   string `json:"error"`
		Account string `json:"account"`
		Holder  string `json:"holder"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	if resp.StatusCode != http.StatusAccepted {
		return 0, &HandOffError{Status: resp.Status, Code: resp.StatusCode, Message: answer.Error, Account: answer.Account, Holder: answer.Holder}
	}
	return answer.RunID, nil
}

// RunReader reads what a daemon's run recorded.
type RunReader interface {
	Runs(ctx context.Context, subscriptionID string, limit int) ([]calsyncd.Run, error)
	Subscription(ctx context.Context, id string) (calsyncd.SubscriptionState, error)
}

// HandOffRefusedError: the daemon did not take the sync. Held is why the
// sync did not run here, Err the daemon's answer.
type HandOffRefusedError struct {
	Subscription, Listen string
	Held, Err            error
}

func (e *HandOffRefusedError) Error() string {
	var ho *HandOffError
	var held *subscription.LeaseHeldError
	if errors.As(e.Err, &ho) && ho.LeaseHeld() {
		holder := ho.Holder
		if holder == "" && errors.As(e.Held, &held) {
			holder = held.Holder
		}
		return fmt.Sprintf("account %s is held by %s, not by the daemon at %s (%v); run the sync where %s runs, or wait for its lease to lapse",
			ho.Account, holder, e.Listen, e.Err, holder)
	}
	return fmt.Sprintf("%v, and the daemon's status endpoint at %s did not take the sync: %v", e.Held, e.Listen, e.Err)
}

// HandOffUnfinishedError: the daemon took the sync as run RunID; the
// caller stopped waiting for it (Err).
type HandOffUnfinishedError struct {
	RunID int64
	Err   error
}

func (e *HandOffUnfinishedError) Error() string {
	return fmt.Sprintf("handed to the running daemon as run %d, which goes on without us (%v); see calsyncd status", e.RunID, e.Err)
}

// HandOffHeld passes each of results whose account a running daemon holds
// (subscription.ErrLeaseHeld) to that daemon, with opts, and waits for the
// daemon's run to finish, so that the result tells its outcome; handed is
// told of each sync the daemon took, before the wait. A result the daemon
// did not take gets a *HandOffRefusedError, one it took and did not
// finish while the caller waited a *HandOffUnfinishedError.
func HandOffHeld(ctx context.Context, cfg *config.Config, st RunReader, results []subscription.Result, opts subscription.Options,
	handed func(id string, runID int64)) {
	for i := range results {
		res := &results[i]
		if !errors.Is(res.Err, subscription.ErrLeaseHeld) {
			continue
		}
		id := res.Report.Subscription
		runID, err := HandOff(ctx, cfg, id, opts)
		if err != nil {
			res.Err = &HandOffRefusedError{Subscription: id, Listen: cfg.Listen, Held: res.Err, Err: err}
			continue
		}
		handed(id, runID)
		rep, err := AwaitRun(ctx, st, id, runID)
		if err != nil {
			res.Err = &HandOffUnfinishedError{RunID: runID, Err: err}
			continue
		}
		res.Report, res.Err = rep, nil
	}
}

// AwaitRun waits for a run the daemon recorded to finish (reading the
// store every 50 ms) and returns it as a report.
func AwaitRun(ctx context.Context, st RunReader, id string, runID int64) (subscription.Report, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		runs, err := st.Runs(ctx, id, 50)
		if err != nil {
			return subscription.Report{}, err
		}
		for _, r := range runs {
			if r.ID != runID || r.FinishedAt.IsZero() {
				continue
			}
			sub, err := st.Subscription(ctx, id)
			if err != nil {
				return subscription.Report{}, err
			}
			return subscription.Report{Subscription: id, Run: r, State: sub.State,
				Transition: subscription.Transition{To: sub.State, ConsecutiveErrors: sub.ConsecutiveErrors}}, nil
		}
		select {
		case <-ctx.Done():
			return subscription.Report{}, ctx.Err()
		case <-tick.C:
		}
	}
}
