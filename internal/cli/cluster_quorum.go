package cli

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newClusterAddController(conn *connection) *cobra.Command {
	var (
		id       int32
		endpoint string
		listener string
	)
	cmd := &cobra.Command{
		Use:   "add-controller",
		Short: "Add a controller to the voters of the metadata quorum (AddRaftVoter, KIP-853)",
		Long: `Add a controller to the voters of the metadata quorum, as
kafka-metadata-quorum.sh add-controller does (AddRaftVoter, KIP-853). The
controller must already run: started with controller.quorum.bootstrap.servers
and outside the initial voters, it waits as a non-voter. The active controller
replicates the metadata log to it, and once it has caught up makes it a voter.

Kafka's tool reads the new controller's node.id, directory ID and controller
listener from its config file; here they are flags: --controller-id, and
--controller-endpoint, the host:port of its controller listener (named by
--controller-listener, the first of controller.listener.names, CONTROLLER by
default). --timeout bounds the wait for the new controller to catch up; one
that has not stays a non-voter, and running the command again promotes it. A
static quorum (controller.quorum.voters) cannot change.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, portStr, err := net.SplitHostPort(endpoint)
			port, perr := strconv.ParseUint(portStr, 10, 16)
			if err != nil || perr != nil || host == "" {
				return fmt.Errorf("--controller-endpoint %q is not host:port", endpoint)
			}
			if id < 0 {
				return errors.New("--controller-id is required (the new controller's node.id)")
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			req := kmsg.NewPtrAddRaftVoterRequest()
			// timeout_ms bounds the active controller's wait for the new
			// controller to catch up: --timeout, as the admin commands'.
			req.VoterID, req.TimeoutMillis = id, int32(min(conn.timeout.Milliseconds(), 1<<31-1))
			l := kmsg.NewAddRaftVoterRequestListener()
			l.Name, l.Host, l.Port = listener, host, uint16(port)
			req.Listeners = append(req.Listeners, l)
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return fmt.Errorf("add controller %d: %s", id, kafkaReason(err, derefString(resp.ErrorMessage)))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Added controller %d at %s to the voters\n", id, endpoint)
			return nil
		},
	}
	cmd.Flags().Int32Var(&id, "controller-id", -1, "the new controller's node.id")
	cmd.Flags().StringVar(&endpoint, "controller-endpoint", "", "host:port of the new controller's controller listener")
	cmd.Flags().StringVar(&listener, "controller-listener", "CONTROLLER", "the name of the controller listener (controller.listener.names)")
	return cmd
}

func newClusterRemoveController(conn *connection) *cobra.Command {
	var (
		id    int32
		dirID string
	)
	cmd := &cobra.Command{
		Use:   "remove-controller",
		Short: "Remove a controller from the voters of the metadata quorum (RemoveRaftVoter, KIP-853)",
		Long: `Remove a controller from the voters of the metadata quorum, as
kafka-metadata-quorum.sh remove-controller --controller-id does
(RemoveRaftVoter, KIP-853). A removed active controller steps down and the
remaining voters elect one. A node that is a broker too keeps following the
metadata log without a vote (an observer). --controller-directory-id is
accepted for Kafka's form; Samsa does not check it. The last voter cannot be
removed, nor a voter of a static quorum (controller.quorum.voters).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id < 0 {
				return errors.New("--controller-id is required")
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			req := kmsg.NewPtrRemoveRaftVoterRequest()
			req.VoterID = id
			if dirID != "" {
				u, err := parseUUID(dirID)
				if err != nil {
					return fmt.Errorf("--controller-directory-id: %w", err)
				}
				req.VoterDirectoryID = u
			}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return fmt.Errorf("remove controller %d: %s", id, kafkaReason(err, derefString(resp.ErrorMessage)))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed controller %d from the voters\n", id)
			return nil
		},
	}
	cmd.Flags().Int32Var(&id, "controller-id", -1, "the controller's node.id")
	cmd.Flags().StringVar(&dirID, "controller-directory-id", "", "the controller's directory ID (Kafka's form; not checked)")
	return cmd
}

// parseUUID reads a Kafka UUID as Kafka prints it: 16 bytes in URL-safe
// base64 without padding.
func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("%q is not a UUID (22 characters of URL-safe base64)", s)
	}
	copy(u[:], b)
	return u, nil
}
