package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Upgrade types of UpdateFeatures (KIP-778), Kafka's
// FeatureUpdate.UpgradeType codes.
const (
	upgradeTypeUpgrade         int8 = 1
	upgradeTypeSafeDowngrade   int8 = 2
	upgradeTypeUnsafeDowngrade int8 = 3
)

const metadataVersionFeature = "metadata.version"

// metadataVersions are Kafka's metadata.version levels by name, from the
// lowest Kafka 4 supports (3.3-IV3, level 7): kafka-features.sh prints
// metadata.version levels by these names and takes them in --metadata.
// The table runs past what Samsa implements (to 4.0-IV3) because the
// command works against newer Kafka clusters too.
var metadataVersions = []string{
	7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0", 13: "3.6-IV1",
	14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0",
	21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1",
	28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0",
}

// featureLevelText is a level as kafka-features.sh prints it: by name for
// metadata.version ("UNKNOWN n" for a level it does not know), else the
// number.
func featureLevelText(feature string, level int16) string {
	if feature != metadataVersionFeature {
		return strconv.Itoa(int(level))
	}
	if level > 0 && int(level) < len(metadataVersions) && metadataVersions[level] != "" {
		return metadataVersions[level]
	}
	return "UNKNOWN " + strconv.Itoa(int(level))
}

// parseMetadataVersion reads --metadata as Kafka's
// MetadataVersion.fromVersionString: a level's full name ("4.0-IV3") or a
// release ("4.0"), which is its newest level.
func parseMetadataVersion(s string) (int16, error) {
	level := int16(-1)
	for l, name := range metadataVersions {
		if name != "" && (name == s || strings.HasPrefix(name, s+"-IV")) {
			level = int16(l) // the last match is the release's newest
		}
	}
	if level < 0 {
		var names []string
		for _, n := range metadataVersions {
			if n != "" {
				names = append(names, n)
			}
		}
		return 0, fmt.Errorf("unknown metadata.version %q: want one of %s (or a release such as 4.0)", s, strings.Join(names, ", "))
	}
	return level, nil
}

func newFeatureCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "feature",
		Short: "Describe, upgrade and downgrade the cluster's finalized feature levels",
		Long: `Describe and change the cluster's feature levels (KIP-584), as
kafka-features.sh does: metadata.version, transaction.version (2 turns
transactions v2 on, KIP-890), group.version (1 turns the KIP-848 consumer
group protocol on) and whatever else the cluster supports. describe reads
them with ApiVersions; upgrade, downgrade and disable send UpdateFeatures,
which the cluster applies all or nothing.`,
	}
	conn.register(cmd)
	cmd.AddCommand(newFeatureDescribe(&conn),
		newFeatureUpdate(&conn, "upgrade"), newFeatureUpdate(&conn, "downgrade"), newFeatureUpdate(&conn, "disable"))
	RejectUnknownSubcommands(cmd)
	return cmd
}

// featureRow is one feature of feature describe --json.
type featureRow struct {
	Feature             string `json:"feature"`
	SupportedMinVersion int16  `json:"supported_min_version"`
	SupportedMaxVersion int16  `json:"supported_max_version"`
	// FinalizedVersionLevel is 0 for a feature the cluster supports and
	// has not finalized.
	FinalizedVersionLevel int16 `json:"finalized_version_level"`
	// Epoch is the finalized levels' epoch, null when the broker gave none.
	Epoch *int64 `json:"epoch"`
}

func newFeatureDescribe(conn *connection) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "List every feature the cluster supports, its supported range and finalized level",
		Long: `List every feature a broker of the cluster supports with its supported range,
its finalized level (0: not finalized) and the epoch of the finalized
levels, as kafka-features.sh describe prints them (Kafka's
Admin.describeFeatures: ApiVersions v3+). metadata.version levels are
printed by name (4.0-IV3).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-cli", "1"
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return fmt.Errorf("the cluster refused ApiVersions: %s", kafkaReason(err, ""))
			}
			rows := featureRows(resp)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			return printFeatures(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of text")
	return cmd
}

// featureRows are the supported features of an ApiVersions answer, sorted
// by name, each with its finalized level.
func featureRows(resp *kmsg.ApiVersionsResponse) []featureRow {
	finalized := map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		finalized[f.Name] = f.MaxVersionLevel
	}
	var epoch *int64
	if resp.FinalizedFeaturesEpoch >= 0 {
		epoch = &resp.FinalizedFeaturesEpoch
	}
	rows := []featureRow{}
	for _, f := range resp.SupportedFeatures {
		rows = append(rows, featureRow{Feature: f.Name, SupportedMinVersion: f.MinVersion, SupportedMaxVersion: f.MaxVersion,
			FinalizedVersionLevel: finalized[f.Name], Epoch: epoch})
	}
	slices.SortFunc(rows, func(a, b featureRow) int { return strings.Compare(a.Feature, b.Feature) })
	return rows
}

// printFeatures prints rows as kafka-features.sh describe does, a
// tab-separated line per feature.
func printFeatures(out io.Writer, rows []featureRow) error {
	for _, r := range rows {
		epoch := "-"
		if r.Epoch != nil {
			epoch = strconv.FormatInt(*r.Epoch, 10)
		}
		if _, err := fmt.Fprintf(out, "Feature: %s\tSupportedMinVersion: %s\tSupportedMaxVersion: %s\tFinalizedVersionLevel: %s\tEpoch: %s\n",
			r.Feature, featureLevelText(r.Feature, r.SupportedMinVersion), featureLevelText(r.Feature, r.SupportedMaxVersion),
			featureLevelText(r.Feature, r.FinalizedVersionLevel), epoch); err != nil {
			return err
		}
	}
	return nil
}

// featureUpdateFlags are the flags of upgrade, downgrade and disable.
type featureUpdateFlags struct {
	features []string
	metadata string
	unsafe   bool
	dryRun   bool
}

func newFeatureUpdate(conn *connection, op string) *cobra.Command {
	var fl featureUpdateFlags
	cmd := &cobra.Command{Args: cobra.NoArgs}
	switch op {
	case "upgrade":
		cmd.Use = "upgrade --feature NAME=LEVEL... | --metadata VERSION [--dry-run]"
		cmd.Short = "Raise finalized feature levels"
		cmd.Example = `  samsa feature upgrade --feature group.version=1
  samsa feature upgrade --metadata 4.0-IV3 --dry-run`
	case "downgrade":
		cmd.Use = "downgrade --feature NAME=LEVEL... | --metadata VERSION [--unsafe] [--dry-run]"
		cmd.Short = "Lower finalized feature levels"
		cmd.Long = `Lower finalized feature levels, as kafka-features.sh downgrade does: a safe
downgrade, or with --unsafe one that may lose metadata (which Kafka 4 and
Samsa refuse for metadata.version). The cluster refuses a downgrade of
metadata.version across a level that changed the metadata records.`
		cmd.Example = `  samsa feature downgrade --feature transaction.version=1
  samsa feature downgrade --metadata 4.0-IV1`
	case "disable":
		cmd.Use = "disable --feature NAME... [--unsafe] [--dry-run]"
		cmd.Short = "Set features to level 0 (not finalized)"
		cmd.Example = `  samsa feature disable --feature group.version`
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		updates, err := fl.updates(op)
		if err != nil {
			return err
		}
		cl, err := conn.client(cmd)
		if err != nil {
			return err
		}
		defer cl.Close()
		ctx, cancel := conn.opContext(cmd.Context())
		defer cancel()
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.TimeoutMillis = int32(min(conn.timeout.Milliseconds(), 1<<31-1))
		req.ValidateOnly = fl.dryRun
		for _, u := range updates {
			ru := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
			ru.Feature, ru.MaxVersionLevel, ru.UpgradeType = u.Feature, u.MaxVersionLevel, u.UpgradeType
			ru.AllowDowngrade = u.UpgradeType != upgradeTypeUpgrade // v0's form of the same
			req.FeatureUpdates = append(req.FeatureUpdates, ru)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		return printFeatureUpdates(cmd.OutOrStdout(), op, fl.dryRun, updates, resp)
	}
	f := cmd.Flags()
	if op == "disable" {
		f.StringArrayVar(&fl.features, "feature", nil, "a feature to disable (repeatable)")
	} else {
		f.StringArrayVar(&fl.features, "feature", nil, "a feature and its new level, NAME=LEVEL (repeatable), for example metadata.version=25")
		f.StringVar(&fl.metadata, "metadata", "", "the new metadata.version by name, 4.0-IV3, or a release, 4.0 (its newest level)")
	}
	if op != "upgrade" {
		f.BoolVar(&fl.unsafe, "unsafe", false, "allow a downgrade that may lose metadata (UNSAFE_DOWNGRADE)")
	}
	f.BoolVar(&fl.dryRun, "dry-run", false, "have the cluster check the change, and keep nothing (validate_only)")
	return cmd
}

// updates reads the flags as kafka-features.sh does.
func (fl featureUpdateFlags) updates(op string) ([]kmsg.UpdateFeaturesRequestFeatureUpdate, error) {
	upgradeType := upgradeTypeUpgrade
	if op != "upgrade" {
		upgradeType = upgradeTypeSafeDowngrade
		if fl.unsafe {
			upgradeType = upgradeTypeUnsafeDowngrade
		}
	}
	var updates []kmsg.UpdateFeaturesRequestFeatureUpdate
	add := func(name string, level int16) error {
		if slices.ContainsFunc(updates, func(u kmsg.UpdateFeaturesRequestFeatureUpdate) bool { return u.Feature == name }) {
			return fmt.Errorf("the feature %s is given more than once", name)
		}
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
		updates = append(updates, u)
		return nil
	}
	if fl.metadata != "" {
		level, err := parseMetadataVersion(fl.metadata)
		if err != nil {
			return nil, err
		}
		if err := add(metadataVersionFeature, level); err != nil {
			return nil, err
		}
	}
	for _, arg := range fl.features {
		if op == "disable" {
			if name := strings.TrimSpace(arg); name == "" {
				return nil, errors.New("--feature is empty: want a feature's name")
			} else if err := add(name, 0); err != nil {
				return nil, err
			}
			continue
		}
		name, level, err := parseFeatureLevel(arg)
		if err != nil {
			return nil, err
		}
		if err := add(name, level); err != nil {
			return nil, err
		}
	}
	if len(updates) == 0 {
		if op == "disable" {
			return nil, errors.New("nothing to disable: give --feature")
		}
		return nil, fmt.Errorf("nothing to %s: give --feature NAME=LEVEL or --metadata", op)
	}
	return updates, nil
}

// parseFeatureLevel reads NAME=LEVEL as kafka-features.sh does: the name
// trimmed, the level a 16-bit integer.
func parseFeatureLevel(s string) (string, int16, error) {
	name, levelText, ok := strings.Cut(s, "=")
	name, levelText = strings.TrimSpace(name), strings.TrimSpace(levelText)
	if !ok || name == "" {
		return "", 0, fmt.Errorf("invalid --feature %q: want NAME=LEVEL", s)
	}
	level, err := strconv.ParseInt(levelText, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("invalid --feature %q: the level %q is not a 16-bit integer", s, levelText)
	}
	return name, int16(level), nil
}

// printFeatureUpdates prints one line per feature, sorted by name, as
// kafka-features.sh does, and fails when any failed. UpdateFeatures v2
// answers only at the top level, for every feature; v0 and v1 may answer
// per feature.
func printFeatureUpdates(out io.Writer, op string, dryRun bool, updates []kmsg.UpdateFeaturesRequestFeatureUpdate, resp *kmsg.UpdateFeaturesResponse) error {
	reasons := map[string]string{}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		for _, u := range updates {
			reasons[u.Feature] = kafkaReason(err, msg)
		}
	}
	for _, r := range resp.Results {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			msg := ""
			if r.ErrorMessage != nil {
				msg = *r.ErrorMessage
			}
			reasons[r.Feature] = kafkaReason(err, msg)
		}
	}
	sorted := slices.SortedFunc(slices.Values(updates), func(a, b kmsg.UpdateFeaturesRequestFeatureUpdate) int {
		return strings.Compare(a.Feature, b.Feature)
	})
	failed := 0
	for _, u := range sorted {
		level := strconv.Itoa(int(u.MaxVersionLevel))
		what, done := op+" "+u.Feature+" to "+level, op+"d to "+level
		if op == "disable" {
			what, done = "disable "+u.Feature, "disabled"
		}
		if reason, ok := reasons[u.Feature]; ok {
			failed++
			prefix := "Could not "
			if dryRun {
				prefix = "Can not "
			}
			fmt.Fprintf(out, "%s%s. %s\n", prefix, what, reason)
			continue
		}
		verb := " was "
		if dryRun {
			verb = " can be "
		}
		fmt.Fprintf(out, "%s%s%s.\n", u.Feature, verb, done)
	}
	if failed > 0 {
		return fmt.Errorf("%d out of %d operation(s) failed", failed, len(updates))
	}
	return nil
}
