"""Schemathesis hooks of `npm run fuzz`: strategies for what the partner document can name but a
JSON Schema cannot spell out.

- `format: cpf` / `format: cnpj`: tax ids whose check digits match (the API verifies them);
- `format: e164`: phone numbers that libphonenumber takes as valid (Brazilian mobiles);
- `format: pix-key`: each kind of pix key (cpf, cnpj, e-mail, phone, random key);
- a fresh Idempotency-Key per request (see `before_call`);
- distinct signer cpfs in a schema-valid loan request (see `_distinct_signers`);
- the PSP's `Pix-Signature` over the exact bytes sent to `POST /psp/v1/pix` (see `PspSignature`).

Without them most schema-valid values would fail a rule the schema cannot state, and the fuzzer
would report those refusals instead of looking further.
"""

import hashlib
import hmac
import itertools
import json
import os
import re
import time

from hypothesis import strategies as st

import schemathesis

CNPJ_CHARACTERS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _cpf_check_digits(digits: str) -> str:
    for length in (9, 10):
        total = sum(int(d) * w for d, w in zip(digits[:length], range(length + 1, 1, -1)))
        remainder = total % 11
        digits += "0" if remainder < 2 else str(11 - remainder)
    return digits


@st.composite
def cpfs(draw):
    base = draw(st.text(alphabet="0123456789", min_size=9, max_size=9).filter(lambda s: len(set(s)) > 1))
    cpf = _cpf_check_digits(base)
    if draw(st.booleans()):
        return f"{cpf[:3]}.{cpf[3:6]}.{cpf[6:9]}-{cpf[9:]}"
    return cpf


def _cnpj_check_digits(base: str) -> str:
    # Each character counts as its ASCII code minus 48 (digits stay digits, A = 17 …).
    for weights in ([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]):
        total = sum((ord(c) - 48) * w for c, w in zip(base, weights))
        remainder = total % 11
        base += "0" if remainder < 2 else str(11 - remainder)
    return base


@st.composite
def cnpjs(draw):
    alphabet = draw(st.sampled_from(["0123456789", CNPJ_CHARACTERS]))
    base = draw(st.text(alphabet=alphabet, min_size=12, max_size=12).filter(lambda s: len(set(s)) > 1))
    cnpj = _cnpj_check_digits(base)
    if draw(st.booleans()):
        return f"{cnpj[:2]}.{cnpj[2:5]}.{cnpj[5:8]}/{cnpj[8:12]}-{cnpj[12:]}"
    return cnpj


schemathesis.openapi.format("cpf", cpfs())
schemathesis.openapi.format("cnpj", cnpjs())
schemathesis.openapi.format(
    "e164",
    st.from_regex(r"\A\+55(11|21|31|41|51|61|71|81|91)9[0-9]{8}\Z"),
)

schemathesis.openapi.format(
    "pix-key",
    st.one_of(
        cpfs(),
        cnpjs(),
        st.from_regex(r"\A[a-z0-9._-]{1,20}@[a-z0-9]{1,20}\.com\.br\Z"),
        st.from_regex(r"\A\+55(11|21|31|41|51|61|71|81|91)9[0-9]{8}\Z"),
        st.uuids().map(str),
    ),
)

_keys = itertools.count(1)
_key_shape = re.compile(r"[\x20-\x7e]{1,255}")


def _headers_are_the_invalid_part(case) -> bool:
    """Schemathesis revalidates a case a hook changed; one whose only fault is a header (a missing
    Authorization, say) would then pass for valid and be sent with the header restored. Such
    cases are left as they are."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative:
        return False
    location = getattr(meta.phase.data, "parameter_location", None)
    return location is None or location.name == "HEADER"


# The PSP's notifications: Pix received and payout outcomes, both signed alike (contract §14, §16).
PSP_PATHS = ("/psp/v1/pix", "/psp/v1/payouts")


def _psp_body(case) -> bytes:
    """The bytes a PSP notification sends: serialized here once, so the signature covers them."""
    body = case.body
    if isinstance(body, bytes):
        return body
    if type(body).__name__ == "NotSet":
        return b""
    return json.dumps(body).encode("utf-8")


@schemathesis.auth(refresh_interval=None, retry_on=[]).apply_to(
    path_regex="^/psp/v1/(pix|payouts)$"
)
class PspSignature:
    """The PSP's HMAC (contract §14): `t=<now>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with
    the secret run.ts passes as FUZZ_PSP_SECRET. An auth provider, not a plain header, so the
    fuzzer's own probes (the request without it, with a wrong one) know it for the credential."""

    def get(self, case, context):
        return os.environ["FUZZ_PSP_SECRET"]

    def set(self, case, secret, context):
        t = str(int(time.time()))
        digest = hmac.new(secret.encode(), f"{t}.".encode() + _psp_body(case), hashlib.sha256)
        case.headers = {**(case.headers or {}), "Pix-Signature": f"t={t},v1={digest.hexdigest()}"}


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.operation.path in PSP_PATHS:
        # The body as signed; a body the caller passes is sent as it is, not serialized again.
        kwargs["data"] = _psp_body(case)
    if _headers_are_the_invalid_part(case):
        return
    _fresh_idempotency_key(case)
    _distinct_signers(case)


def _fresh_idempotency_key(case):
    """A well-formed Idempotency-Key becomes a fresh one for every request.

    A key is state: its first response is replayed for 24 hours, and on another operation it is
    refused (409). Generated keys repeat across cases ("0", "00" …), so each case would otherwise
    meet the answer of an unrelated earlier one. Malformed keys are sent as generated.
    """
    headers = case.headers or {}
    if "Authorization" not in headers:
        return  # revalidation would take the bearer token (sent by the CLI) for missing
    for name in list(headers):
        if name.lower() == "idempotency-key" and _key_shape.fullmatch(str(headers[name])):
            headers[name] = f"fuzz-{next(_keys)}"


_spare_cpfs = (_cpf_check_digits(f"{n:09d}") for n in itertools.count(100_000_001))


def _distinct_signers(case):
    """A loan's extra signers need distinct cpfs (contract §8), which `uniqueItems` cannot say of
    one property. In a schema-valid `POST /v3/loans`, a repeated cpf becomes a fresh valid one, so
    the case reaches the rules behind it; negative cases are sent as generated."""
    meta = case.meta
    if meta is not None and meta.generation.mode.is_negative:
        return
    if case.method.upper() != "POST" or case.operation.path != "/v3/loans":
        return
    signers = case.body.get("signers") if isinstance(case.body, dict) else None
    if not isinstance(signers, list):
        return
    seen = set()
    for signer in signers:
        if not isinstance(signer, dict):
            continue
        cpf = re.sub(r"\D", "", str(signer.get("cpf", "")))
        if cpf in seen:
            while cpf in seen:
                cpf = next(_spare_cpfs)
            signer["cpf"] = cpf
        seen.add(cpf)
