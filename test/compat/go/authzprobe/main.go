// Command authzprobe is librdkafka's side of the authorization matrix
// (internal/broker/e2e_authz_matrix_test.go), through confluent-kafka-go:
// a long-lived process the Go test starts with SAMSA_AUTHZ_LIBRDKAFKA,
// which runs one probe per line of stdin as a SASL/PLAIN user and answers
// with the Kafka error code librdkafka reported. It speaks AuthzProbe.java's
// line protocol: a request is user, password, probe and the probe's
// arguments, tab-separated; the answer is the code (0: allowed), a tab and
// a detail, or "error", a tab and why the probe could not run.
//
// Usage: authzprobe BOOTSTRAP, or authzprobe -version for the versions of
// confluent-kafka-go and librdkafka, as the compat results name them.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// timeout bounds one probe.
const timeout = 20 * time.Second

type prober struct {
	bootstrap string
	admins    map[string]*kafka.AdminClient
}

// result is a probe's answer, returned as an error from where librdkafka
// reported it.
type result struct {
	code   int
	detail string
}

func (r *result) Error() string { return fmt.Sprintf("%d: %s", r.code, r.detail) }

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-version" {
		_, lib := kafka.LibraryVersion()
		fmt.Printf("%s (librdkafka %s)\n", moduleVersion("github.com/confluentinc/confluent-kafka-go/v2"), lib)
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: authzprobe BOOTSTRAP")
		os.Exit(2)
	}
	p := &prober{bootstrap: os.Args[1], admins: map[string]*kafka.AdminClient{}}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		f := strings.Split(in.Text(), "\t")
		answer := "error\ta request needs a user, a password and a probe"
		if len(f) >= 3 {
			answer = p.answer(f[0], f[1], f[2], f[3:])
		}
		fmt.Fprintln(out, answer)
		out.Flush()
	}
	for _, a := range p.admins {
		a.Close()
	}
}

// moduleVersion is the version of a module this binary was built with.
func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "unknown"
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\t", " ").Replace(s) }

func (p *prober) answer(user, password, probe string, args []string) string {
	err := p.run(user, password, probe, args)
	var r *result
	switch {
	case err == nil:
		return "0\t"
	case errors.As(err, &r):
		return fmt.Sprintf("%d\t%s", r.code, oneLine(r.detail))
	}
	return "error\t" + oneLine(err.Error())
}

// failure is the result of a librdkafka error that carries a Kafka error
// code; any other (a local error: a timeout, a bad argument) means the
// probe could not run.
func failure(err error) error {
	var ke kafka.Error
	if errors.As(err, &ke) && ke.Code() > 0 {
		return &result{code: int(ke.Code()), detail: ke.String()}
	}
	return fmt.Errorf("librdkafka failed outside the protocol: %w", err)
}

func (p *prober) conf(user, password string) *kafka.ConfigMap {
	return &kafka.ConfigMap{
		"bootstrap.servers": p.bootstrap,
		"security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanisms":   "PLAIN",
		"sasl.username":     user,
		"sasl.password":     password,
		"log_level":         3,
	}
}

func (p *prober) admin(user, password string) (*kafka.AdminClient, error) {
	if a, ok := p.admins[user]; ok {
		return a, nil
	}
	a, err := kafka.NewAdminClient(p.conf(user, password))
	if err != nil {
		return nil, err
	}
	p.admins[user] = a
	return a, nil
}

func resourceType(s string) (kafka.ResourceType, error) {
	switch s {
	case "topic":
		return kafka.ResourceTopic, nil
	case "broker":
		return kafka.ResourceBroker, nil
	}
	return 0, fmt.Errorf("no config resource type %q", s)
}

// configResults is the first error of a config call's resources.
func configResults(res []kafka.ConfigResourceResult, err error) error {
	if err != nil {
		return failure(err)
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return failure(r.Error)
		}
	}
	return nil
}

func (p *prober) run(user, password, probe string, a []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	adm, err := p.admin(user, password)
	if err != nil {
		return err
	}
	arg := func(i int) string {
		if i < len(a) {
			return a[i]
		}
		return ""
	}
	switch probe {
	case "alter-configs", "incremental-alter-configs":
		// A change of one config, validated only; AlterConfigs is the
		// request the Java client no longer sends.
		rt, err := resourceType(arg(0))
		if err != nil {
			return err
		}
		entry := kafka.ConfigEntry{Name: arg(2), Value: "3600000", Operation: kafka.AlterOperationSet}
		res := []kafka.ConfigResource{{Type: rt, Name: arg(1), Config: []kafka.ConfigEntry{entry}}}
		if probe == "alter-configs" {
			return configResults(adm.AlterConfigs(ctx, res, kafka.SetAdminValidateOnly(true)))
		}
		return configResults(adm.IncrementalAlterConfigs(ctx, res, kafka.SetAdminValidateOnly(true)))
	case "describe-configs":
		rt, err := resourceType(arg(0))
		if err != nil {
			return err
		}
		return configResults(adm.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: rt, Name: arg(1)}}))
	case "create-topic":
		res, err := adm.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: arg(0), NumPartitions: 1, ReplicationFactor: 1}},
			kafka.SetAdminValidateOnly(true))
		if err != nil {
			return failure(err)
		}
		for _, r := range res {
			if r.Error.Code() != kafka.ErrNoError {
				return failure(r.Error)
			}
		}
		return nil
	case "produce":
		conf := p.conf(user, password)
		conf.SetKey("acks", "all")
		conf.SetKey("enable.idempotence", false)
		conf.SetKey("message.timeout.ms", int(timeout/time.Millisecond))
		pr, err := kafka.NewProducer(conf)
		if err != nil {
			return err
		}
		defer pr.Close()
		topic := arg(0)
		done := make(chan kafka.Event, 1)
		if err := pr.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Value: []byte("v")}, done); err != nil {
			return failure(err)
		}
		m := (<-done).(*kafka.Message)
		if m.TopicPartition.Error != nil {
			return failure(m.TopicPartition.Error)
		}
		return nil
	}
	return fmt.Errorf("no probe %q", probe)
}
