package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describedFeatures is what kadm's ApiVersions reports for one broker, as
// Kafka's Admin.describeFeatures reads it: "name=min..max" for each
// supported feature, "name=level" for each finalized one, and the epoch.
type describedFeatures struct {
	supported, finalized []string
	epoch                int64
}

func featuresOf(resp *kmsg.ApiVersionsResponse) describedFeatures {
	var d describedFeatures
	for _, f := range resp.SupportedFeatures {
		d.supported = append(d.supported, fmt.Sprintf("%s=%d..%d", f.Name, f.MinVersion, f.MaxVersion))
	}
	for _, f := range resp.FinalizedFeatures {
		d.finalized = append(d.finalized, fmt.Sprintf("%s=%d", f.Name, f.MaxVersionLevel))
	}
	slices.Sort(d.supported)
	slices.Sort(d.finalized)
	d.epoch = resp.FinalizedFeaturesEpoch
	return d
}

// brokerFeatures asks every broker of adm's cluster for its features.
func brokerFeatures(t *testing.T, ctx context.Context, adm *kadm.Client) map[int32]describedFeatures {
	t.Helper()
	vs, err := adm.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]describedFeatures{}
	for _, v := range vs.Sorted() {
		if v.Err != nil {
			t.Fatalf("ApiVersions of broker %d: %v", v.NodeID, v.Err)
		}
		out[v.NodeID] = featuresOf(v.Raw())
	}
	return out
}

// updateFeatures sends UpdateFeatures at version v on r (a connection to
// one broker, so neither the version nor the broker is the client's
// choice) and returns the top-level outcome as "NAME: message", or "ok"
// plus the per-feature results v0 and v1 carry.
func updateFeatures(r *rawConn, v int16, validateOnly bool, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) string {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version, req.ValidateOnly, req.FeatureUpdates = v, validateOnly, updates
	return updateOutcome(r.roundTrip(req, 1).(*kmsg.UpdateFeaturesResponse))
}

func updateOutcome(resp *kmsg.UpdateFeaturesResponse) string {
	if resp.ErrorCode != 0 {
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		return kerr.ErrorForCode(resp.ErrorCode).(*kerr.Error).Message + ": " + msg
	}
	out := "ok"
	for _, r := range resp.Results {
		out += fmt.Sprintf(" %s:%d", r.Feature, r.ErrorCode)
	}
	return out
}

func featureUpdate(name string, level int16, upgradeType int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
	return u
}

// TestE2EUpdateFeatures changes finalized levels on a single node with
// kadm and the raw request at each version, reads them back as Kafka's
// Admin.describeFeatures does (ApiVersions), and restarts.
func TestE2EUpdateFeatures(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	adm, ctx := adminClient(t, b)
	cl := newClient(t, b.Addr())
	r := dialRaw(t, b)

	before := brokerFeatures(t, ctx, adm)[1]
	wantSupported := []string{"group.version=0..1", "metadata.version=7..25", "share.version=0..1", "streams.version=0..1", "transaction.version=0..2"}
	if !slices.Equal(before.supported, wantSupported) || !slices.Equal(before.finalized, []string{"group.version=1", "metadata.version=25", "share.version=1", "streams.version=1", "transaction.version=2"}) || before.epoch <= 0 {
		t.Fatalf("features at the start: %+v", before)
	}

	// kadm: a dry run changes nothing, then the downgrade.
	res, err := adm.UpdateFeatures(ctx, true, kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 0, UpgradeType: 2})
	if err != nil || res.Error() != nil {
		t.Fatalf("validate only: %v %v", err, res.Error())
	}
	if now := brokerFeatures(t, ctx, adm)[1]; !slices.Equal(now.finalized, before.finalized) || now.epoch != before.epoch {
		t.Fatalf("a dry run changed the features: %+v", now)
	}
	res, err = adm.UpdateFeatures(ctx, false,
		kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 0, UpgradeType: 2},
		kadm.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 24, UpgradeType: 2})
	if err != nil || res.Error() != nil {
		t.Fatalf("downgrade: %v %v", err, res.Error())
	}
	after := brokerFeatures(t, ctx, adm)[1]
	if !slices.Equal(after.finalized, []string{"metadata.version=24", "share.version=1", "streams.version=1", "transaction.version=2"}) || after.epoch <= before.epoch {
		t.Fatalf("after the downgrade: %+v (epoch before %d)", after, before.epoch)
	}

	// group.version 0 turns the consumer group protocol off.
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberEpoch, hb.SubscribedTopicNames, hb.RebalanceTimeoutMillis = "g-off", 0, []string{"t"}, 30000
	if resp, err := hb.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("ConsumerGroupHeartbeat at group.version 0: %v %+v", err, resp)
	}

	// Refusals at each version: v0 and v1 carry results only on success.
	for _, tc := range []struct {
		v    int16
		u    kmsg.UpdateFeaturesRequestFeatureUpdate
		want string
	}{
		{2, featureUpdate("group.version", 2, 1), "INVALID_UPDATE_VERSION: The update failed for all features since the following feature had an error: " +
			"Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1"},
		{1, featureUpdate("metadata.version", 22, 2), "INVALID_UPDATE_VERSION: The update failed for all features since the following feature had an error: " +
			"Invalid metadata.version 22. Refusing to perform the requested downgrade because it might delete metadata information."},
		{1, featureUpdate("metadata.version", 22, 3), "INVALID_UPDATE_VERSION: The update failed for all features since the following feature had an error: " +
			"Invalid metadata.version 22. Unsafe metadata downgrade is not supported in this version."},
		{0, featureUpdate("transaction.version", 1, 0), "INVALID_UPDATE_VERSION: The update failed for all features since the following feature had an error: " +
			"Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{2, featureUpdate("streams.version", 2, 1), "INVALID_UPDATE_VERSION: The update failed for all features since the following feature had an error: " +
			"Invalid update version 2 for feature streams.version. Local controller 1 only supports versions 0-1"},
		{2, featureUpdate("no.such", 0, 2), "INVALID_UPDATE_VERSION: The update failed for all features since the following feature had an error: " +
			"Invalid update version 0 for feature no.such. Feature no.such not found."},
		{1, featureUpdate("group.version", 1, 1), "ok group.version:0"},
		{2, featureUpdate("metadata.version", 25, 1), "ok"},
	} {
		if got := updateFeatures(r, tc.v, false, tc.u); got != tc.want {
			t.Errorf("v%d %s=%d type %d:\n got %s\nwant %s", tc.v, tc.u.Feature, tc.u.MaxVersionLevel, tc.u.UpgradeType, got, tc.want)
		}
	}
	// v0's allow_downgrade is a safe downgrade.
	down := featureUpdate("transaction.version", 1, 0)
	down.AllowDowngrade = true
	if got := updateFeatures(r, 0, false, down); got != "ok transaction.version:0" {
		t.Errorf("v0 allow_downgrade: %s", got)
	}

	// The levels are the metadata's: a restart keeps them.
	want := []string{"group.version=1", "metadata.version=25", "share.version=1", "streams.version=1", "transaction.version=1"}
	if got := brokerFeatures(t, ctx, adm)[1]; !slices.Equal(got.finalized, want) {
		t.Fatalf("before the restart: %v, want %v", got.finalized, want)
	}
	b = restartBroker(t, b, dir)
	adm, ctx = adminClient(t, b)
	if got := brokerFeatures(t, ctx, adm)[1]; !slices.Equal(got.finalized, want) {
		t.Errorf("after the restart: %v, want %v", got.finalized, want)
	}
}

// TestE2EApiVersionsV3LeavesOutMinZeroFeatures: before v4, a supported
// range starting at 0 breaks clients, so Kafka leaves those features out
// (KAFKA-17492); the finalized levels are all there.
func TestE2EApiVersionsV3LeavesOutMinZeroFeatures(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	for v, want := range map[int16][]string{3: {"metadata.version=7..25"}, 4: {"group.version=0..1", "metadata.version=7..25", "share.version=0..1", "streams.version=0..1", "transaction.version=0..2"}} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-test", "1.0"
		got := featuresOf(r.roundTrip(req, int32(v)).(*kmsg.ApiVersionsResponse))
		if !slices.Equal(got.supported, want) || len(got.finalized) != 5 {
			t.Errorf("v%d: supported %v, finalized %v; want supported %v", v, got.supported, got.finalized, want)
		}
	}
}

// TestE2EUpdateFeaturesNeedsAlterOnTheCluster: without ALTER on the
// cluster the request is refused as a whole.
func TestE2EUpdateFeaturesNeedsAlterOnTheCluster(t *testing.T) {
	e := newAuthzEnv(t, nil)
	cl := e.client("alice", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.ValidateOnly, req.FeatureUpdates = true, []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("group.version", 0, 2)}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	got := updateOutcome(resp)
	if !strings.HasPrefix(got, "CLUSTER_AUTHORIZATION_FAILED") {
		t.Errorf("alice without ALTER: %s", got)
	}
}

// TestClusterUpdateFeatures changes a level through a broker that is not
// the active controller: every broker reports it, at one epoch, and after
// a node restarts.
func TestClusterUpdateFeatures(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	active := c.activeController()
	var via *clusterNode
	for _, n := range c.nodes {
		if n != active {
			via = n
			break
		}
	}
	// Every broker registered the levels it supports.
	for _, br := range via.get().ctrl.Image().Brokers() {
		if len(br.Features) != 5 {
			t.Errorf("broker %d registered features %v", br.NodeID, br.Features)
		}
	}
	if got := updateFeatures(dialRawAddr(t, via.get().Addr()), 2, false, featureUpdate("transaction.version", 1, 2)); got != "ok" {
		t.Fatalf("downgrade through broker %d: %s", via.id, got)
	}
	// The forwarding broker answered once its own image had the level.
	if got := via.get().ctrl.Image().Feature("transaction.version"); got != 1 {
		t.Errorf("broker %d answered with transaction.version %d in its image", via.id, got)
	}
	check := func(when string) {
		t.Helper()
		adm, ctx := c.admin()
		var epochs []int64
		deadline := time.Now().Add(10 * time.Second)
		for {
			all := brokerFeatures(t, ctx, adm)
			epochs = epochs[:0]
			ok := len(all) == len(c.nodes)
			for _, d := range all {
				ok = ok && slices.Contains(d.finalized, "transaction.version=1")
				epochs = append(epochs, d.epoch)
			}
			if ok || time.Now().After(deadline) {
				if !ok {
					t.Fatalf("%s: %+v", when, all)
				}
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if slices.Min(epochs) <= 0 {
			t.Errorf("%s: epochs %v", when, epochs)
		}
	}
	check("after the update")
	n := c.nodes[2]
	c.stop(n)
	c.start(n)
	c.waitLive(len(c.nodes))
	check("after node 3 restarted")
}
