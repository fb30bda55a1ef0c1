"""Test doubles: a fake Messages API and a fake editor (fakes, never mocks)."""
