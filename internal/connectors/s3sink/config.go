package s3sink

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Config names, as Confluent's S3 sink and its storage-common partitioners
// spell them, so a Confluent connector config runs unchanged.
const (
	cfgBucket           = "s3.bucket.name"
	cfgRegion           = "s3.region"
	cfgStoreURL         = "store.url"
	cfgPathStyle        = "s3.path.style.access.enabled"
	cfgAccessKeyID      = "aws.access.key.id"
	cfgSecretAccessKey  = "aws.secret.access.key"
	cfgPartSize         = "s3.part.size"
	cfgSSEA             = "s3.ssea.name"
	cfgSSEKMSKeyID      = "s3.sse.kms.key.id"
	cfgSSECustomerKey   = "s3.sse.customer.key"
	cfgACLCanned        = "s3.acl.canned"
	cfgObjectTagging    = "s3.object.tagging"
	cfgCompressionType  = "s3.compression.type"
	cfgCompressionLevel = "s3.compression.level"
	cfgPartRetries      = "s3.part.retries"
	cfgRetryBackoffMs   = "s3.retry.backoff.ms"
	cfgTopicsDir        = "topics.dir"
	cfgDirectoryDelim   = "directory.delim"
	cfgFileDelim        = "file.delim"
	cfgFormatClass      = "format.class"
	cfgFlushSize        = "flush.size"
	cfgRotateInterval   = "rotate.interval.ms"
	cfgRotateSchedule   = "rotate.schedule.interval.ms"
	cfgPartitionerClass = "partitioner.class"
	cfgPathFormat       = "path.format"
	cfgPartitionDur     = "partition.duration.ms"
	cfgLocale           = "locale"
	cfgTimezone         = "timezone"
	cfgTSExtractor      = "timestamp.extractor"
	cfgTSField          = "timestamp.field"
	cfgPartitionField   = "partition.field.name"
	cfgParquetCodec     = "parquet.codec"
	cfgAvroCodec        = "avro.codec"
	cfgNullValues       = "behavior.on.null.values"
	cfgByteArrayExt     = "format.bytearray.extension"
	cfgByteArraySep     = "format.bytearray.separator"
)

// Format and partitioner class names, as Confluent's.
const (
	formatJSON      = "io.confluent.connect.s3.format.json.JsonFormat"
	formatAvro      = "io.confluent.connect.s3.format.avro.AvroFormat"
	formatParquet   = "io.confluent.connect.s3.format.parquet.ParquetFormat"
	formatByteArray = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"

	partitionerPkg       = "io.confluent.connect.storage.partitioner."
	partitionerDefault   = partitionerPkg + "DefaultPartitioner"
	partitionerTimeBased = partitionerPkg + "TimeBasedPartitioner"
	partitionerField     = partitionerPkg + "FieldPartitioner"
	partitionerHourly    = partitionerPkg + "HourlyPartitioner"
	partitionerDaily     = partitionerPkg + "DailyPartitioner"
)

// minPartSize is S3's smallest multipart part (every part but the last).
const minPartSize = 5 * 1024 * 1024

// unsupportedConfigs are Confluent S3 sink configs this sink refuses, each
// with what to use instead or why (docs/connect/s3-sink.md, Left out):
// refused rather than ignored, so nobody believes a setting took effect.
var unsupportedConfigs = map[string]string{
	"s3.credentials.provider.class":  "credential provider classes are Java classes; give aws.access.key.id and aws.secret.access.key, or leave them empty for the AWS SDK's default chain (environment, shared files, instance roles)",
	"s3.proxy.url":                   "set HTTPS_PROXY/HTTP_PROXY in the worker's environment: the AWS SDK's client uses them",
	"store.kafka.keys":               "keys are not written: the files hold record values, as Confluent's sink does by default",
	"store.kafka.headers":            "headers are not written: the files hold record values, as Confluent's sink does by default",
	"schema.compatibility":           "only NONE: every schema change starts new files (no projection of records to another schema)",
	"partitioner.max.open.files":     "no bound on open files: a commit holds at most flush.size records per Kafka partition",
	"s3.schema.partition.affix.type": "no schema-name affixes in paths: name directories with partitioner.class and path.format",
}

var (
	formats      = []string{formatJSON, formatAvro, formatParquet, formatByteArray}
	partitioners = []string{partitionerDefault, partitionerTimeBased, partitionerField, partitionerHourly, partitionerDaily}
	extractors   = []string{"Record", "RecordField", "Wallclock"}
)

func configDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	str := func(name string, def any, imp connect.Importance, doc string, v connect.Validator, rec ...string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.TypeString, Default: def, Importance: imp, Documentation: doc, Validator: v, Recommended: rec})
	}
	long := func(name string, def int64, v connect.Validator, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.TypeLong, Default: def, Importance: connect.High, Documentation: doc, Validator: v})
	}
	str(cfgBucket, connect.NoDefault, connect.High, "The S3 bucket.", connect.NonEmptyString{})
	str(cfgRegion, "us-west-2", connect.Medium, "The AWS region of the bucket.", nil)
	str(cfgStoreURL, "", connect.High, "The store's endpoint URL, for S3-compatible stores (MinIO, Ceph...). Empty: AWS S3.", connect.ValidatorFunc(validURL))
	d.Define(connect.ConfigKey{Name: cfgPathStyle, Type: connect.TypeBoolean, Default: true, Importance: connect.Low, Documentation: "Address the bucket in the path (http://host/bucket/key) instead of the host name; S3-compatible stores need it."})
	str(cfgAccessKeyID, "", connect.High, "The access key; empty uses the AWS SDK's default credential chain.", nil)
	d.Define(connect.ConfigKey{Name: cfgSecretAccessKey, Type: connect.TypePassword, Default: connect.Password(""), Importance: connect.High, Documentation: "The secret key."})
	d.Define(connect.ConfigKey{Name: cfgPartSize, Type: connect.TypeInt, Default: int32(25 * 1024 * 1024), Validator: connect.Between(minPartSize, 2147483647), Importance: connect.High, Documentation: "The part size of multipart uploads; a file this big or bigger is uploaded in parts."})
	d.Define(connect.ConfigKey{Name: cfgPartRetries, Type: connect.TypeInt, Default: int32(3), Validator: connect.AtLeast(0), Importance: connect.Medium, Documentation: "Retries of a failed S3 request (the SDK's retryer) before the task sees a retriable error."})
	long(cfgRetryBackoffMs, 200, connect.AtLeast(0), "The largest backoff between S3 request retries.")
	str(cfgSSEA, "", connect.Low, "Server-side encryption of the objects: AES256 (S3-managed keys, or with s3.sse.customer.key the customer's key) or aws:kms; empty for none.", connect.OneOf{Values: sseAlgorithms}, sseAlgorithms...)
	str(cfgSSEKMSKeyID, "", connect.Low, "aws:kms: the KMS key's ID or ARN; empty uses the account's default S3 key.", nil)
	d.Define(connect.ConfigKey{Name: cfgSSECustomerKey, Type: connect.TypePassword, Default: connect.Password(""), Importance: connect.Low, Documentation: "SSE-C: the customer's 256-bit AES key, base64; every object is written, and read back at recovery, with it."})
	str(cfgACLCanned, "", connect.Low, "The canned ACL of each object (private, bucket-owner-full-control ...); empty for the bucket's default.", connect.OneOf{Values: cannedACLs}, cannedACLs...)
	str(cfgCompressionType, "none", connect.Low, "JsonFormat and ByteArrayFormat: none, or gzip (the files end in .gz); Avro and Parquet use avro.codec and parquet.codec.", connect.OneOf{Values: []string{"none", "gzip"}}, "none", "gzip")
	d.Define(connect.ConfigKey{Name: cfgCompressionLevel, Type: connect.TypeInt, Default: int32(-1), Validator: connect.Between(-1, 9), Importance: connect.Low, Documentation: "The gzip level: -1 the default, 0 none to 9 best."})
	d.Define(connect.ConfigKey{Name: cfgObjectTagging, Type: connect.TypeBoolean, Default: false, Importance: connect.Low, Documentation: "Tag each object with its startOffset, endOffset and recordCount, as Confluent's sink does."})
	str(cfgTopicsDir, "topics", connect.High, "The top-level directory of the objects.", nil)
	str(cfgDirectoryDelim, "/", connect.Medium, "The directory delimiter in keys.", connect.NonEmptyString{})
	str(cfgFileDelim, "+", connect.Medium, "The delimiter between topic, partition and offset in file names.", connect.NonEmptyString{})
	d.Define(connect.ConfigKey{Name: cfgFormatClass, Type: connect.TypeClass, Default: connect.NoDefault, Importance: connect.High, Documentation: "The file format.", Validator: connect.OneOf{Values: formats}, Recommended: formats})
	d.Define(connect.ConfigKey{Name: cfgFlushSize, Type: connect.TypeInt, Default: connect.NoDefault, Validator: connect.AtLeast(1), Importance: connect.High, Documentation: "Records of a Kafka partition per commit of files."})
	long(cfgRotateInterval, -1, nil, "Commit files when a record's timestamp (timestamp.extractor) is this far past the first record's of the open files, or when the encoded partition changes. -1: off.")
	long(cfgRotateSchedule, -1, nil, "Commit open files at wall-clock multiples of this interval in the timezone. -1: off.")
	d.Define(connect.ConfigKey{Name: cfgPartitionerClass, Type: connect.TypeClass, Default: partitionerDefault, Importance: connect.High, Documentation: "How records are laid out in directories.", Validator: connect.OneOf{Values: partitioners}, Recommended: partitioners})
	str(cfgPathFormat, "", connect.Medium, "TimeBasedPartitioner: the directory path, a Joda-Time pattern such as 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH.", nil)
	long(cfgPartitionDur, -1, nil, "TimeBasedPartitioner: the duration of one directory, in milliseconds.")
	str(cfgLocale, "", connect.Medium, "TimeBasedPartitioner: the locale of path.format (names of months and days are written in English only).", nil)
	str(cfgTimezone, "", connect.Medium, "TimeBasedPartitioner and rotate.schedule.interval.ms: the time zone (IANA name such as UTC or America/Los_Angeles).", nil)
	str(cfgTSExtractor, "Wallclock", connect.Medium, "Where a record's time comes from: Record (the Kafka timestamp), RecordField (timestamp.field of the value) or Wallclock.", connect.OneOf{Values: extractors}, extractors...)
	str(cfgTSField, "timestamp", connect.Medium, "RecordField: the value's field (dotted for nested fields) holding the time: epoch milliseconds, an ISO-8601 string or a Timestamp.", nil)
	d.Define(connect.ConfigKey{Name: cfgPartitionField, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Documentation: "FieldPartitioner: the value's fields whose values name the directories."})
	str(cfgParquetCodec, "snappy", connect.Low, "Parquet compression.", connect.OneOf{Values: parquetCodecNames()}, parquetCodecNames()...)
	str(cfgAvroCodec, "null", connect.Low, "Avro container file compression.", connect.OneOf{Values: avroCodecNames()}, avroCodecNames()...)
	str(cfgNullValues, "fail", connect.Low, "What a record with a null value does: fail the task, or be ignored (skipped).", connect.OneOf{Values: []string{"ignore", "fail"}, CaseInsensitive: true}, "ignore", "fail")
	str(cfgByteArrayExt, ".bin", connect.Low, "ByteArrayFormat: the files' extension.", nil)
	d.Define(connect.ConfigKey{Name: cfgByteArraySep, Type: connect.TypeString, Default: "\n", Importance: connect.Low, Documentation: "ByteArrayFormat: the bytes written after each record."})
	return d
}

func validURL(name string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http or https URL")
	}
	return nil
}

// config is a parsed, cross-checked connector config.
type config struct {
	bucket, region, storeURL string
	pathStyle                bool
	accessKeyID, secretKey   string
	partSize                 int64
	partRetries              int
	retryBackoff             time.Duration
	topicsDir, dirDelim      string
	fileDelim                string
	format                   string
	flushSize                int64
	rotateInterval           int64 // ms; <= 0 off
	rotateSchedule           int64 // ms; <= 0 off
	nullValues               string
	parquetCodec, avroCodec  string
	byteArrayExt             string
	byteArraySep             string
	partitioner              partitioner
	extractor                timestampExtractor
	location                 *time.Location // rotate.schedule.interval.ms's day boundaries
	objects                  objectOptions
	gzipLevel                int // -2: no gzip (s3.compression.type=none)
}

// parseConfig reads and cross-checks props; every error names its config.
func parseConfig(props map[string]string) (*config, error) {
	if err := checkUnsupported(props); err != nil {
		return nil, err
	}
	raw, err := configDef().Parse(props)
	if err != nil {
		return nil, err
	}
	c := &config{
		bucket: raw.String(cfgBucket), region: raw.String(cfgRegion), storeURL: raw.String(cfgStoreURL),
		pathStyle: raw.Bool(cfgPathStyle), accessKeyID: raw.String(cfgAccessKeyID), secretKey: raw.Password(cfgSecretAccessKey),
		partSize: raw.Int(cfgPartSize), partRetries: int(raw.Int(cfgPartRetries)),
		retryBackoff: time.Duration(raw.Int(cfgRetryBackoffMs)) * time.Millisecond,
		topicsDir:    strings.Trim(raw.String(cfgTopicsDir), "/"), dirDelim: raw.String(cfgDirectoryDelim),
		fileDelim: raw.String(cfgFileDelim), format: raw.String(cfgFormatClass), flushSize: raw.Int(cfgFlushSize),
		rotateInterval: raw.Int(cfgRotateInterval), rotateSchedule: raw.Int(cfgRotateSchedule),
		nullValues:   strings.ToLower(raw.String(cfgNullValues)),
		parquetCodec: raw.String(cfgParquetCodec), avroCodec: raw.String(cfgAvroCodec),
		byteArrayExt: raw.String(cfgByteArrayExt),
		// The separator is taken as given: trimming would turn "\n" into "".
		byteArraySep: byteArraySeparator(props),
	}
	if (c.accessKeyID == "") != (c.secretKey == "") {
		return nil, fmt.Errorf("%s and %s must be set together", cfgAccessKeyID, cfgSecretAccessKey)
	}
	if c.byteArrayExt != "" && !strings.HasPrefix(c.byteArrayExt, ".") {
		// Recovery finds files by <offset>.<ext>; another shape would hide them.
		return nil, fmt.Errorf("Invalid value %s for configuration %s: must be empty or start with '.'", c.byteArrayExt, cfgByteArrayExt)
	}
	if err := c.checkFormat(); err != nil {
		return nil, err
	}
	if c.objects, err = parseObjectOptions(raw); err != nil {
		return nil, err
	}
	c.gzipLevel = -2
	if raw.String(cfgCompressionType) == "gzip" {
		if c.format == formatAvro || c.format == formatParquet {
			return nil, fmt.Errorf("Invalid value gzip for configuration %s: Avro and Parquet files compress with %s and %s", cfgCompressionType, cfgAvroCodec, cfgParquetCodec)
		}
		c.gzipLevel = int(raw.Int(cfgCompressionLevel))
	}
	if c.extractor, err = newTimestampExtractor(raw); err != nil {
		return nil, err
	}
	if c.partitioner, err = newPartitioner(raw, c.dirDelim, c.extractor); err != nil {
		return nil, err
	}
	if c.rotateSchedule > 0 {
		tz := raw.String(cfgTimezone)
		if tz == "" {
			return nil, fmt.Errorf("Invalid value for configuration %s: %s needs %s to be set", cfgTimezone, cfgRotateSchedule, cfgTimezone)
		}
		if c.location, err = loadLocation(tz); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func byteArraySeparator(props map[string]string) string {
	if s, ok := props[cfgByteArraySep]; ok {
		return s
	}
	return "\n"
}

func (c *config) checkFormat() error {
	switch c.format {
	case formatParquet:
		if _, ok := parquetCodecs[c.parquetCodec]; !ok {
			return fmt.Errorf("Invalid value %s for configuration %s: not supported", c.parquetCodec, cfgParquetCodec)
		}
	case formatAvro:
		if _, ok := avroCodecs[c.avroCodec]; !ok {
			return fmt.Errorf("Invalid value %s for configuration %s: not supported", c.avroCodec, cfgAvroCodec)
		}
	}
	return nil
}

func checkUnsupported(props map[string]string) error {
	var errs []error
	names := make([]string, 0, len(unsupportedConfigs))
	for name := range unsupportedConfigs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, set := props[name]; set {
			errs = append(errs, fmt.Errorf("configuration %s is not supported by this S3 sink: %s", name, unsupportedConfigs[name]))
		}
	}
	return errors.Join(errs...)
}

func loadLocation(tz string) (*time.Location, error) {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("Invalid value %s for configuration %s: unknown time zone", tz, cfgTimezone)
	}
	return loc, nil
}

// extension is the file name's suffix for the configured format, as
// Confluent's record writer providers name them.
func (c *config) extension() string {
	switch c.format {
	case formatAvro:
		return ".avro"
	case formatParquet:
		return parquetCodecs[c.parquetCodec].ext + ".parquet"
	case formatByteArray:
		return c.byteArrayExt + c.gzipSuffix()
	}
	return ".json" + c.gzipSuffix()
}

func (c *config) gzipSuffix() string {
	if c.gzipLevel == -2 {
		return ""
	}
	return ".gz"
}
