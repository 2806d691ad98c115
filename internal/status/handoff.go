package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// HandOff asks the daemon's status endpoint at listen (the configured
// listen address) to run a subscription now, as POST
// /subscriptions/{id}/sync does, and returns the new run's id. It is how
// `calsyncd sync` passes on a subscription whose account a running daemon
// holds.
func HandOff(ctx context.Context, listen, token, id string) (int64, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return 0, err
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+net.JoinHostPort(host, port)+"/subscriptions/"+url.PathEscape(id)+"/sync", nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach it: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	var body struct {
		RunID int64  `json:"run_id"`
		Error string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusAccepted {
		return 0, fmt.Errorf("it answered %s: %s", resp.Status, body.Error)
	}
	return body.RunID, nil
}
