// Package deploy holds what calsyncd ships for running it as a service —
// the systemd unit, its sysusers.d file and the Prometheus alerting rules —
// and the tests that install and check them as the README says.
package deploy
