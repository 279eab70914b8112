"""Blueprint solver"""
