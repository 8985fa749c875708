"""The job object as the client reads it (no daemon): the members of
triage-protocol(7) that Job names, the idempotency key and the result
payload, whatever a daemon of this or another version sends."""

from __future__ import annotations

import base64
import unittest

import harness  # noqa: F401 - puts the checkout's package first

import triage


def job(**members: object) -> triage.Job:
    return triage.Job.from_dict({"id": 7, "state": "succeeded", **members})


class JobTest(unittest.TestCase):
    def test_old_daemon_has_no_key_nor_result(self) -> None:
        j = job()
        self.assertIsNone(j.key)
        self.assertFalse(j.existing)
        self.assertIsNone(j.result)
        self.assertFalse(j.result_truncated)
        self.assertIsNone(j.result_text())
        self.assertIsNone(j.result_json())

    def test_key_and_existing(self) -> None:
        j = job(key="order-42")
        self.assertEqual((j.key, j.existing), ("order-42", False))
        j = job(key="order-42", existing=True)
        self.assertTrue(j.existing)
        # Only the JSON true counts.
        self.assertFalse(job(existing="yes").existing)

    def test_result_text(self) -> None:
        j = job(result='{"answer": 42, "name": "\u00e9t\u00e9"}')
        self.assertEqual(j.result, '{"answer": 42, "name": "été"}'.encode())
        self.assertEqual(j.result_json(), {"answer": 42, "name": "été"})
        self.assertEqual(j.result_text(), '{"answer": 42, "name": "été"}')

    def test_result_base64(self) -> None:
        raw = b"\xff\xfe\x00binary"
        j = job(result={"base64": base64.b64encode(raw).decode()})
        self.assertEqual(j.result, raw)
        with self.assertRaises(UnicodeDecodeError):
            j.result_text()
        self.assertEqual(j.result_text(errors="replace"),
                         "\ufffd\ufffd\x00binary")
        with self.assertRaises(ValueError):
            j.result_json()

    def test_result_empty_is_not_none(self) -> None:
        j = job(result="")
        self.assertEqual(j.result, b"")
        self.assertEqual(j.result_text(), "")

    def test_truncated_result(self) -> None:
        j = job(result='{"long": "abc', result_truncated=True)
        self.assertTrue(j.result_truncated)
        self.assertEqual(j.result, b'{"long": "abc')
        with self.assertRaisesRegex(ValueError, "truncated"):
            j.result_json()

    def test_bad_result_is_a_protocol_error(self) -> None:
        with self.assertRaises(triage.ProtocolError):
            job(result={"base64": "not base64!"})
        with self.assertRaises(triage.ProtocolError):
            job(result=12)

    def test_raw_and_unknown_members(self) -> None:
        j = job(argv=["a", {"base64": base64.b64encode(b"\xff").decode()}],
                future_member=[1])
        self.assertEqual(j.argv, ["a", b"\xff"])
        self.assertEqual(j["future_member"], [1])
        self.assertEqual(j.get("nothing", 3), 3)
        self.assertTrue(j.terminal and j.succeeded)


if __name__ == "__main__":
    unittest.main()
