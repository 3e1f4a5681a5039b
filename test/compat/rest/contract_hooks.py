"""Schemathesis hooks of the REST Proxy contract check (check_contract.sh).

One check, ``status_code_in_spec``, runs in place of schemathesis'
``status_code_conformance``: the same check, except for two answers the
spec leaves out where Confluent's REST Proxy gives them (README.md here,
"Exclusions"):

- 404 whose body is a not-found error (error_code 404, 40401, 40402 or
  40403) from an operation whose path names a broker, config, group,
  consumer, topic or partition: the spec documents 404 on some of these
  operations and not on others (GET /brokers/{broker_id}, the broker and
  cluster config operations, the consumer group ones), yet any of them can
  name a resource that does not exist, and Confluent's resources answer
  404 (Jersey's NotFoundException) there.
- 415 to a request whose body is not sent as application/json: the spec
  documents 415 on produce only, but every operation with a body consumes
  application/json alone, and Confluent (Jersey) answers 415 to any other.
"""

import schemathesis
from schemathesis.specs.openapi.checks import status_code_conformance

NOT_FOUND_CODES = {404, 40401, 40402, 40403}


def _not_found_body(response):
    try:
        body = response.json()
    except Exception:  # not JSON: not one of Confluent's not-found errors
        return False
    return isinstance(body, dict) and body.get("error_code") in NOT_FOUND_CODES


def _names_resource(case):
    params = set(case.path_parameters or {})
    return bool(params - {"cluster_id"})


def _sent_as_json(response):
    ct = response.request.headers.get("Content-Type", "")
    return ct.split(";")[0].strip().lower() == "application/json"


@schemathesis.check
def status_code_in_spec(ctx, response, case):
    code = response.status_code
    documented = {str(c) for c in case.operation.responses.status_codes}
    if str(code) not in documented:
        if code == 404 and _names_resource(case) and _not_found_body(response):
            return None
        if code == 415 and not _sent_as_json(response):
            return None
    return status_code_conformance(ctx, response, case)


# Operations no generated request can make succeed against the fixtures,
# each with the reason; every other operation must answer 2xx at least
# once in a run (every_operation_served), so an operation the proxy does
# not route, whose every answer is a 404 the exclusion above accepts,
# cannot pass unseen.
NEVER_2XX = {
    # The fixture group has no member (its offsets were committed by a
    # consumer that has left): no consumer ID exists to name.
    "GET /clusters/{cluster_id}/consumer-groups/{consumer_group_id}/consumers/{consumer_id}":
        "the fixture group has no member",
    "GET /clusters/{cluster_id}/consumer-groups/{consumer_group_id}/consumers/{consumer_id}/assignments":
        "the fixture group has no member",
    "GET /clusters/{cluster_id}/consumer-groups/{consumer_group_id}/consumers/{consumer_id}/assignments/{topic_name}/partitions/{partition_id}":
        "the fixture group has no member",
    # The runner's brokers run without an authorizer: Kafka answers every
    # ACL request SECURITY_DISABLED (400 40002, as Confluent maps it).
    "GET /clusters/{cluster_id}/acls": "no authorizer on the runner's brokers",
    "POST /clusters/{cluster_id}/acls": "no authorizer on the runner's brokers",
    "POST /clusters/{cluster_id}/acls:batch": "no authorizer on the runner's brokers",
    "DELETE /clusters/{cluster_id}/acls": "no authorizer on the runner's brokers",
    # A reassignment is listed only while in progress, and none is.
    "GET /clusters/{cluster_id}/topics/{topic_name}/partitions/{partition_id}/reassignment":
        "no reassignment is in progress",
}


@schemathesis.check
class every_operation_served:
    """Fail the run if an operation (not in NEVER_2XX) never answered 2xx."""

    def __init__(self):
        self.reached = set()
        self.tested = set()

    def after_response(self, ctx, response, case):
        label = case.operation.label
        self.tested.add(label)
        if 200 <= response.status_code < 300:
            self.reached.add(label)

    def after_run(self, ctx):
        unreached = sorted(self.tested - self.reached - set(NEVER_2XX))
        if unreached:
            raise AssertionError("never answered 2xx: " + ", ".join(unreached))
