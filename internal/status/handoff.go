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
